/* link_rule.h - how fast and how detailed one client's stream is, judged
 * from what its link did (protocol/PROTOCOL.md, "Tiers of detail"): its
 * stride (every frame, every 2nd, every 4th) and its tier of detail
 * (frame_tier.h).  A link that misses the frames it is due loses detail
 * first (a coarser tier at the same frame rate: frames keep a push's effect
 * on screen soon), then frames (at the coarsest tier); one that stays idle
 * enough gets frames back first, then detail, trying the full world every
 * LINK_PROBE_NS at most (a link raised at any moment is found within about
 * that: a token bucket below its rate looks the same at any rate until
 * more than its burst is sent), a try that fails going back at once to the
 * tier it left.  A try's first bytes are the full world's keyframe, and
 * nothing more of the full world follows until the link has delivered it:
 * a keyframe not delivered within the time the full world's frames allow
 * it (link_proof_ns) failed the try, having queued no more than its own
 * bytes ahead of the next frames.  A client may pin the full world: then
 * only its stride moves.
 *
 * Pure: the network thread measures, this decides.  A value per client. */
#ifndef SRV_LINK_RULE_H
#define SRV_LINK_RULE_H

#include <stdbool.h>
#include <stdint.h>

#define LINK_WINDOW_NS 2000000000ull      /* a client's link is judged over 2 s */
#define LINK_STRIDE_HOLD_NS 1500000000ull /* no faster stride within 1.5 s of a change (a change costs no keyframe) */
#define LINK_LATE_TO_SLOW 2               /* late picks in a window that slow it down */
#define LINK_BUSY_TO_FAST 0.7             /* sending time fraction, scaled to the faster choice, that allows it */
#define LINK_STRIDE_MAX 4
#define LINK_PROBE_NS 1500000000ull       /* the full world is tried at most this often (after any change of tier) */
#define LINK_TRY_HOLD_NS 500000000ull     /* between windows, a try needs this much of the window calm */
#define LINK_PROBE_JUDGE_NS 4000000000ull /* a try left within this failed: back to the tier it was tried from */
#define LINK_RATE_FRESH_NS 4000000000ull  /* a measured rate older than this chooses nothing */
#define LINK_TIERS_MAX 4
#define LINK_SETTLE_NS 1000000000ull     /* late picks within this of a measured change are its backlog's */
#define LINK_SETTLE_MAX_NS 3000000000ull /* ... or within the time its backlog takes to drain, up to this */
/* a try's keyframe may take this long past its bytes at the full world's
 * rate and two round trips: the network thread looks at a held socket
 * every 10 ms, and the receiver may hold its last acknowledgement back
 * (delayed ACK, 40 ms) */
#define LINK_PROOF_SLACK_NS 70000000ull

typedef struct link_state {
    int tier;      /* 0: the full world; FC_TIERS - 1 the coarsest */
    int tiers;     /* tiers there are (FC_TIERS) */
    int stride;    /* 1, 2 or 4 */
    int pace;      /* the fewest frames its decoder asked for; stride >= pace */
    bool pinned;   /* the client asked for the full world whatever its link */
    bool bridging; /* waiting for a bridge coding to go back to every frame */
    bool trying;   /* the full world is on trial (since tier_ns) */
    int from;      /* the tier a try was made from (trying) */
    uint64_t stride_ns, tier_ns;
    uint64_t probe_ns;  /* no finer tier before this */
    uint64_t settle_ns; /* late picks before this do not slow it (the backlog of a change) */
} link_state;

/* What the link did over the window just ended. */
typedef struct link_window {
    uint64_t now;
    uint64_t from; /* when the window began (link_try: the part so far) */
    int late;      /* picks that found it at least a stride behind */
    double busy;   /* fraction of the window spent sending its deltas (a keyframe is a one-off) */
    double ratio;  /* bytes of the next finer tier's frame over this tier's (0: unknown) */
    /* the receiver's window held the sender back in the window: the reader
     * (a busy page, a loaded machine), not the link, was slow; late picks
     * then cost frames (as a decoder's pace does), not detail */
    bool reader;
    /* the link's measured rate: bytes a second the kernel saw delivered while
     * the link, not the sender, was the limit (0: none yet), and when */
    double rate;
    uint64_t rate_ns;
    /* bytes a second each tier's frames take at this client's stride (0: unknown) */
    double need[LINK_TIERS_MAX];
} link_window;

/* LINK_BACK: a try failed, back to the tier it was tried from (whose
 * keyframe is due at once: the client holds the full world's frames, which
 * its link cannot carry). */
enum {
    LINK_SAME = 0,
    LINK_SLOWER = 1,
    LINK_BRIDGE = 2,
    LINK_COARSER = 4,
    LINK_FINER = 8,
    LINK_MEASURED = 16,
    LINK_BACK = 32
};

/* A new client: every frame, the full world. */
link_state link_start(int tiers, uint64_t now);
/* Judges the window and updates s; returns what changed (LINK_*;
 * LINK_MEASURED with a tier chosen by the measured rate). */
int link_judge(link_state *s, const link_window *w);
/* Only the measured rate's part of link_judge (a sample taken between
 * windows): the tier it fits, if it is measured since the tier was chosen. */
int link_measure(link_state *s, const link_window *w);
/* Between windows (at a pick), the window so far in w, once it has gone
 * LINK_TRY_HOLD_NS without a late pick: a slower stride than the decoder's
 * pace goes back to every frame (LINK_BRIDGE) once its hold is over and
 * the link idle enough; else the full world's try once it is due
 * (LINK_PROBE_NS after the last change of tier) and the link idle enough
 * for its bytes (LINK_FINER); or LINK_SAME.  (A raised link is found
 * within about a hold and a probe.) */
int link_try(link_state *s, const link_window *w);
/* The time the bytes queued at a measured change (or a failed try) take to
 * drain while the new tier's frames take their share of the link: queued
 * over the measured rate less the tier's need (at least a quarter of the
 * rate), between LINK_SETTLE_NS and LINK_SETTLE_MAX_NS; late picks until
 * then are that backlog's.  Sets s->settle_ns to it when later. */
void link_settle(link_state *s, const link_window *w, double queued);
/* The time the try's keyframe of `bytes` may take from its pick until the
 * link has delivered it (every byte acknowledged): its bytes at the rate
 * the full world's frames need (w->need[0]) over LINK_BUSY_TO_FAST, two of
 * the connection's least round trips (min_rtt_ns, 0: unknown), and
 * LINK_PROOF_SLACK_NS.  0 when the full world's rate is unknown (no
 * proof: the try is judged by its windows alone). */
uint64_t link_proof_ns(const link_window *w, uint64_t bytes, uint64_t min_rtt_ns);
/* The try's keyframe was not delivered in its time: back to the tier the
 * try was made from (LINK_COARSER | LINK_BACK), as a try whose frames came
 * late; LINK_SAME when no try is on. */
int link_proof_failed(link_state *s, uint64_t now);
/* The client pins the full world (or lets the rule choose again). */
void link_pin(link_state *s, bool full, uint64_t now);
/* The bridge coding came: every frame again (or the decoder's pace). */
void link_bridged(link_state *s, uint64_t now);

#endif
