// Arm CMSDK APB UART (MPS2/MPS3 FPGA images).
#include "py/mphal.h"
#include "arm/cortexm.h"

#ifndef MICROPY_HW_UART_CLK_HZ
#define MICROPY_HW_UART_CLK_HZ MICROPY_HW_CPU_HZ
#endif

typedef struct {
    volatile uint32_t DATA;
    volatile uint32_t STATE;
    volatile uint32_t CTRL;
    volatile uint32_t INTSTATUS;    // write 1 to clear
    volatile uint32_t BAUDDIV;
} cmsdk_uart_t;

#define UART                ((cmsdk_uart_t *)MICROPY_HW_UART_BASE)
#define STATE_TXFULL        (1u << 0)
#define STATE_RXFULL        (1u << 1)
#define CTRL_TX_EN          (1u << 0)
#define CTRL_RX_EN          (1u << 1)
#define CTRL_RX_INT_EN      (1u << 3)
#define INT_RX              (1u << 1)

void mp_port_uart_init(void) {
    UART->BAUDDIV = MICROPY_HW_UART_CLK_HZ / MICROPY_HW_UART_BAUD;
    UART->CTRL = CTRL_TX_EN | CTRL_RX_EN;
}

void mp_port_uart_irq_enable(void) {
    UART->INTSTATUS = INT_RX;
    UART->CTRL |= CTRL_RX_INT_EN;
    static const uint8_t irqs[] = { MICROPY_HW_UART_IRQS };
    for (size_t i = 0; i < sizeof(irqs); ++i) {
        mp_nvic_enable(irqs[i]);
    }
}

int mp_port_uart_rx(void) {
    if (UART->STATE & STATE_RXFULL) {
        return UART->DATA & 0xff;
    }
    return -1;
}

void mp_port_uart_service(void) {
    // Clear before draining so a byte landing mid-drain re-raises the IRQ.
    // A byte left unread when the ring is full raises nothing more: the next
    // polled service (stdin_pop) takes it.
    UART->INTSTATUS = INT_RX;
    int c;
    while (mp_port_stdin_room() && (c = mp_port_uart_rx()) >= 0) {
        mp_port_stdin_push(c);
    }
}

void mp_port_uart_tx(const char *buf, size_t len) {
    for (size_t i = 0; i < len; ++i) {
        while (UART->STATE & STATE_TXFULL) {
        }
        UART->DATA = (uint8_t)buf[i];
    }
}
