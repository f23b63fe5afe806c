# micronn for MicroPython's cmake-based ports (esp32, rp2), as upstream's examples/usercmodule does:
#   cmake/idf.py ... -DUSER_C_MODULES=<repo>/usermod/micropython.cmake
# (or -DUSER_C_MODULES=<repo>/usermod, which means the same). Settings: micronn/micropython.cmake.
include(${CMAKE_CURRENT_LIST_DIR}/micronn/micropython.cmake)
