/* frame_tier.c - tiers of detail: each tier's subset and grid (see
 * frame_tier.h). */
#include "frame_tier.h"

/* Two tiers below the full world: 1 in 2 particles at twice the step, 1 in
 * 4 at four times (docs/wire-v2.md, "Tiers of detail", has the bits each
 * costs). */
static const fc_tier TIERS[FC_TIERS] = {{1, 1}, {2, 2}, {4, 4}};

fc_tier fc_tier_of(int tier) {
    if (tier < 0) tier = 0;
    if (tier >= FC_TIERS) tier = FC_TIERS - 1;
    return TIERS[tier];
}

/* A 32-bit integer hash with good avalanche (Wellons' "lowbias32"): ids are
 * consecutive, so their low bits alone would pick a lattice's planes. */
static uint32_t mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

bool fc_tier_has(int tier, uint32_t id) {
    uint32_t keep = (uint32_t)fc_tier_of(tier).keep;
    return (mix(id) & (keep - 1)) == 0;
}

fc_grid fc_tier_grid(const fc_grid *full, int tier) {
    fc_grid g = *full;
    int m = fc_tier_of(tier).step_mult;
    g.step = full->step * (float)m;
    for (int a = 0; a < 3; a++) {
        int span = full->levels[a] > 0 ? full->levels[a] - 1 : 0; /* in full steps */
        g.levels[a] = (uint16_t)((span + m - 1) / m + 1);
    }
    return g;
}

/* Every index is written and the count advanced by membership, without a
 * branch: membership is a coin toss per particle, which a branch would
 * mispredict half the time. */
int fc_tier_subset(int tier, const uint32_t *id, const int32_t *order, int n, int32_t *out) {
    uint32_t mask = (uint32_t)fc_tier_of(tier).keep - 1;
    int k = 0;
    if (order)
        for (int j = 0; j < n; j++) {
            int32_t i = order[j];
            out[k] = i;
            k += (mix(id[i]) & mask) == 0;
        }
    else
        for (int j = 0; j < n; j++) {
            out[k] = j;
            k += (mix(id[j]) & mask) == 0;
        }
    return k;
}

fc_options fc_tier_options(fc_options o, int full_count) {
    if (o.joint == FC_JOINT_AUTO && full_count >= FC_JOINT_MIN) o.joint = FC_JOINT_ON;
    return o;
}
