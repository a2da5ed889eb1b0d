/* body_contacts.c - contacts between rigid bodies and with the box's
 * walls: sample spheres on each shape against the other's signed distance
 * (Guendelman et al. 2003), resolved by sequential impulses with
 * accumulated, clamped normal and Coulomb friction impulses, warm-started
 * from the previous step, and a Baumgarte bias for penetration beyond a
 * slop. */
#include <string.h>

#include "bodies.h"
#include "body_internal.h"
#include "sim_util.h"

/* ---- body contacts ------------------------------------------------------------- */
typedef struct contact {
    int a, b;     /* body indices; b = -1 - wall for a wall */
    uint32_t key; /* identifies the feature for warm starting */
    v3 p, n;      /* world point, normal from b towards a */
    float depth;  /* penetration (> 0) */
    v3 ra, rb;
    float mn, mt1, mt2, bias;
    v3 t1, t2;
    float jn, jt1, jt2;
} contact;

static float eff_mass(const fs_body *a, const fs_body *b, v3 ra, v3 rb, v3 n) {
    float k = a->inv_mass + dot(cross(inv_inertia_mul(a, cross(ra, n)), ra), n);
    if (b) k += b->inv_mass + dot(cross(inv_inertia_mul(b, cross(rb, n)), rb), n);
    return k > 0 ? 1.0f / k : 0.0f;
}

static void add_contact(fs_world *w, int a, int b, uint32_t key, v3 p, v3 n, float depth) {
    if (w->ncontacts >= FS_MAX_CONTACTS) return;
    contact *c = (contact *)w->contacts + w->ncontacts++;
    memset(c, 0, sizeof *c);
    c->a = a, c->b = b, c->key = key, c->p = p, c->n = n, c->depth = depth;
}

#define CONTACT_MARGIN 0.01f

static void find_contacts(fs_world *w) {
    w->ncontacts = 0;
    v3 sc[FS_BODY_SAMPLES];
    float sr[FS_BODY_SAMPLES];
    const v3 lo = w->dom.box_min, hi = w->dom.box_max;
    for (int a = 0; a < w->nbodies; a++) {
        fs_body *A = &w->bodies[a];
        if (A->is_static) continue;
        int ns = fs__body_samples(w, A, sc, sr);
        /* walls: each sample sphere against the six faces */
        for (int s = 0; s < ns; s++) {
            v3 p = add(A->pos, qrot(A->rot, sc[s]));
            const float pl[6] = {p.x - lo.x, hi.x - p.x, p.y - lo.y, hi.y - p.y, p.z - lo.z, hi.z - p.z};
            const v3 nn[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
            for (int f = 0; f < 6; f++) {
                float d = pl[f] - sr[s];
                if (d < CONTACT_MARGIN)
                    add_contact(w, a, -1 - f, (uint32_t)(s * 8 + f), sub(p, mul(nn[f], sr[s])), nn[f], -d);
            }
        }
        /* other bodies: A's samples against B's distance, both ways round */
        for (int b = 0; b < w->nbodies; b++) {
            if (b == a) continue;
            fs_body *B = &w->bodies[b];
            if (len(sub(A->pos, B->pos)) > A->bound + B->bound + CONTACT_MARGIN) continue;
            if (!B->is_static && b < a) continue; /* a pair of dynamic bodies once */
            for (int pass = 0; pass < 2; pass++) {
                /* pass 0: A's samples in B; pass 1: B's samples in A (normal flipped) */
                fs_body *S = pass ? B : A, *D = pass ? A : B;
                int m = fs__body_samples(w, S, sc, sr);
                for (int s = 0; s < m; s++) {
                    v3 p = add(S->pos, qrot(S->rot, sc[s])), n;
                    float d = sdf_world(w, D, p, &n) - sr[s];
                    if (d >= CONTACT_MARGIN) continue;
                    /* normal from D towards S; contact point on S's surface */
                    v3 cp = sub(p, mul(n, sr[s]));
                    if (pass == 0)
                        add_contact(w, a, b, (uint32_t)(1000 + s), cp, n, -d);
                    else
                        add_contact(w, a, b, (uint32_t)(2000 + s), cp, mul(n, -1.0f), -d);
                }
            }
        }
    }
}

static void prepare_contacts(fs_world *w, float dt) {
    contact *cs = (contact *)w->contacts;
    contact *prev = (contact *)w->contacts_prev;
    for (int k = 0; k < w->ncontacts; k++) {
        contact *c = &cs[k];
        fs_body *A = &w->bodies[c->a], *B = c->b >= 0 ? &w->bodies[c->b] : NULL;
        c->ra = sub(c->p, A->pos);
        c->rb = B ? sub(c->p, B->pos) : (v3){0, 0, 0};
        c->t1 = norm(fabsf(c->n.x) < 0.9f ? cross(c->n, (v3){1, 0, 0}) : cross(c->n, (v3){0, 1, 0}));
        c->t2 = cross(c->n, c->t1);
        c->mn = eff_mass(A, B, c->ra, c->rb, c->n);
        c->mt1 = eff_mass(A, B, c->ra, c->rb, c->t1);
        c->mt2 = eff_mass(A, B, c->ra, c->rb, c->t2);
        /* Baumgarte: push out 20% of the penetration beyond a 5 mm slop per step */
        float pen = c->depth - 0.005f;
        c->bias = pen > 0 ? 0.2f * pen / dt : 0.0f;
        if (c->bias > 2.0f) c->bias = 2.0f;
        /* warm start from the same feature last step */
        for (int q = 0; q < w->ncontacts_prev; q++) {
            if (prev[q].a == c->a && prev[q].b == c->b && prev[q].key == c->key) {
                c->jn = prev[q].jn, c->jt1 = prev[q].jt1, c->jt2 = prev[q].jt2;
                v3 J = add(mul(c->n, c->jn), add(mul(c->t1, c->jt1), mul(c->t2, c->jt2)));
                apply_impulse(A, c->p, J);
                if (B) apply_impulse(B, c->p, mul(J, -1.0f));
                break;
            }
        }
    }
}

static v3 rel_vel(const fs_body *A, const fs_body *B, const contact *c) {
    v3 va = add(A->vel, cross(A->ang, c->ra));
    v3 vb = B ? add(B->vel, cross(B->ang, c->rb)) : (v3){0, 0, 0};
    return sub(va, vb);
}

static void solve_contacts(fs_world *w, int iterations) {
    contact *cs = (contact *)w->contacts;
    for (int it = 0; it < iterations; it++) {
        for (int k = 0; k < w->ncontacts; k++) {
            contact *c = &cs[k];
            fs_body *A = &w->bodies[c->a], *B = c->b >= 0 ? &w->bodies[c->b] : NULL;
            float mu = B ? sqrtf(A->friction * B->friction) : A->friction;
            /* friction first, limited by the current normal impulse */
            v3 dv = rel_vel(A, B, c);
            float lim = mu * c->jn;
            float j1 = -dot(dv, c->t1) * c->mt1, o1 = c->jt1;
            c->jt1 = fmaxf(-lim, fminf(lim, o1 + j1));
            float j2 = -dot(dv, c->t2) * c->mt2, o2 = c->jt2;
            c->jt2 = fmaxf(-lim, fminf(lim, o2 + j2));
            v3 Jt = add(mul(c->t1, c->jt1 - o1), mul(c->t2, c->jt2 - o2));
            apply_impulse(A, c->p, Jt);
            if (B) apply_impulse(B, c->p, mul(Jt, -1.0f));
            /* normal: non-penetration with the Baumgarte bias, accumulated >= 0 */
            dv = rel_vel(A, B, c);
            float jn = (-dot(dv, c->n) + c->bias) * c->mn, on = c->jn;
            c->jn = fmaxf(0.0f, on + jn);
            v3 Jn = mul(c->n, c->jn - on);
            apply_impulse(A, c->p, Jn);
            if (B) apply_impulse(B, c->p, mul(Jn, -1.0f));
        }
    }
    /* keep this step's impulses for the next warm start */
    memcpy(w->contacts_prev, w->contacts, sizeof(contact) * (size_t)w->ncontacts);
    w->ncontacts_prev = w->ncontacts;
}

size_t fs__contact_size(void) {
    return sizeof(contact);
}

void fs__bodies_contacts(fs_world *w, float dt, int iterations) {
    find_contacts(w);
    prepare_contacts(w, dt);
    solve_contacts(w, iterations);
}

fs_status fs__contacts_check(const void *contacts, int nc, int nb, fs_error *err) {
    const contact *cs = contacts;
    for (int k = 0; k < nc; k++) {
        contact c;
        memcpy(&c, cs + k, sizeof c);
        bool ok = c.a >= 0 && c.a < nb && c.b >= -6 && c.b < nb && c.b != c.a;
        const float f[] = {c.p.x,  c.p.y,  c.p.z,  c.n.x,  c.n.y,  c.n.z, c.depth, c.ra.x, c.ra.y,
                           c.ra.z, c.rb.x, c.rb.y, c.rb.z, c.mn,   c.mt1, c.mt2,   c.bias, c.t1.x,
                           c.t1.y, c.t1.z, c.t2.x, c.t2.y, c.t2.z, c.jn,  c.jt1,   c.jt2};
        for (size_t q = 0; q < sizeof f / sizeof f[0] && ok; q++) ok = isfinite(f[q]) && fabsf(f[q]) <= 1e12f;
        if (!ok || c.jn < 0) {
            SETERR(err, "snapshot: contact %d names bodies %d, %d of %d or has a bad impulse", k, c.a, c.b, nb);
            return FS_ERR_ARG;
        }
    }
    return FS_OK;
}
