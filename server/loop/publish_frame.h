/* publish_frame.h - a frame of the world handed to the encoder thread: the
 * bodies and head the frame message carries, the particles the codec codes,
 * the quantization grid, and the statistics of the hand-over.  Sim thread
 * only. */
#ifndef SRV_PUBLISH_FRAME_H
#define SRV_PUBLISH_FRAME_H

#include "sim_state.h"

/* Hands the world as it is now to the encoder (which codes it on its own
 * thread) and counts it in the sim thread's statistics; a frame the encoder
 * cannot take now is skipped (counted by the encoder). */
void sim_publish_frame(sim_thread *s);

#endif
