/* sim_stats.c - the step time histogram's bucket bounds. */
#include "sim_stats.h"

const double sim_step_bucket_ms[SIM_STEP_BUCKETS] = {1, 2, 5, 10, 15, 20, 30, 50, 75, 100, 250, 1000};
