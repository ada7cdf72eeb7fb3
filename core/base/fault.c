/* fault.c — the switch of base/fault.h, present only in builds with -DAL_FAULTS. */
#include "base/fault.h"

#ifdef AL_FAULTS
al_fault_id al_fault_active = AL_FAULT_NONE;
#else
typedef int al_fault_unused; /* ISO C forbids an empty translation unit */
#endif
