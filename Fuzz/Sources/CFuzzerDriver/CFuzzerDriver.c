// Only the header matters: LLVMFuzzerRunDriver is defined by libFuzzer, linked in by `-sanitize=fuzzer`.
#include "CFuzzerDriver.h"
