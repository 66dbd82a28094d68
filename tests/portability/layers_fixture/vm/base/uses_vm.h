// Crosses a rule on purpose (tests/portability/CMakeLists.txt): the base
// layer uses the VM.
#include "vm/base/status.h"
#include "vm/context.h"
