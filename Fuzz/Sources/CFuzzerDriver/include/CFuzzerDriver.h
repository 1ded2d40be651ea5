// libFuzzer's entry for programs that have their own `main` (every SwiftPM executable does: it names its entry
// point `<module>_main` and aliases `main` to it, so libFuzzer's `main` is never linked in).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test_one_input)(const uint8_t *data, size_t size));
