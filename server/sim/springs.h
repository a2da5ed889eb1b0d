/* springs.h - the world's springs (Clavet 2005 Sec. 5): removing a
 * particle's springs from both ends (springs.c; the Clavet step adds,
 * yields and breaks them). */
#ifndef SIM_SPRINGS_H
#define SIM_SPRINGS_H

#include "fluid_sim.h"

/* Drops every spring of storage slot s, at both ends. */
void fs__springs_drop(fs_world *w, int s);

#endif
