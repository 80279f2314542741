#include "stor.h"
int stor_placeholder_;
