/* shim: all definitions live in kshim.h */
#include "../kshim.h"
