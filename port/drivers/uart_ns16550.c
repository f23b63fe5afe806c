// NS16550-compatible UART (QEMU virt), byte-spaced registers.
#include "py/mphal.h"

#define REG(off)        (*(volatile uint8_t *)(MICROPY_HW_UART_BASE + (off)))
#define RBR_THR         REG(0)
#define IER             REG(1)
#define FCR             REG(2)
#define LCR             REG(3)
#define MCR             REG(4)
#define LSR             REG(5)
#define LSR_DR          (0x01)
#define LSR_THRE        (0x20)

void mp_rv32_irq_enable(unsigned irq);

void mp_port_uart_init(void) {
    LCR = 0x03;     // 8N1
    FCR = 0x07;     // FIFO on and cleared, interrupt at 1 byte
    MCR = 0x08;     // OUT2 gates the IRQ line on PC-style wiring
}

void mp_port_uart_irq_enable(void) {
    IER = 0x01;     // received data available
    mp_rv32_irq_enable(MICROPY_HW_UART_IRQ);
}

int mp_port_uart_rx(void) {
    if (LSR & LSR_DR) {
        return RBR_THR;
    }
    return -1;
}

void mp_port_uart_service(void) {
    int c;
    while (mp_port_stdin_room() && (c = mp_port_uart_rx()) >= 0) {
        mp_port_stdin_push(c);
    }
    // "Data available" is level-triggered: masked while a byte waits for room
    // in the ring (the polled service unmasks it).
    IER = mp_port_stdin_room() ? 0x01 : 0x00;
}

void mp_port_uart_tx(const char *buf, size_t len) {
    for (size_t i = 0; i < len; ++i) {
        while (!(LSR & LSR_THRE)) {
        }
        RBR_THR = (uint8_t)buf[i];
    }
}
