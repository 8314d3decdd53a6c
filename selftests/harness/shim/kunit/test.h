/* shim: the KUnit API, see kshim_kunit.h */
#include "../kshim_kunit.h"
