/* unified_elastic.c - the unified solver's elastic solids (Solenthaler,
 * Schläfli & Pajarola 2007): the displacement gradient over the body
 * neighbours (Eq. 14-16, the cosine kernel of Eq. 17), Green-Saint-Venant
 * strain, von Mises plasticity (O'Brien et al. 2002, the paper's ref. 28),
 * Hooke's stress and the matrix of Eq. 12 that the force pass (unified.c)
 * applies. */
#include <math.h>

#include "unified_internal.h"

void fs__unified_grad_u(const fs_world *w, const ustate *u, const uconst *c, int i, float G[3][3]) {
    const fs_particles *p = &w->p;
    const int s = p->slot[i], nb = u->bn[s];
    const int32_t *BJ = u->bj + (size_t)s * KB;
    const float *RX = u->rx + (size_t)s * KB, *RY = u->ry + (size_t)s * KB, *RZ = u->rz + (size_t)s * KB;
    for (int a = 0; a < 3; a++)
        for (int bb = 0; bb < 3; bb++) G[a][bb] = 0.0f;
    /* Eq. 14: G[a][b] = sum_j d_ij[a] u_ji[b] */
    for (int k = 0; k < nb; k++) {
        const int j = w->slot_index[BJ[k]];
        const float L = sqrtf(RX[k] * RX[k] + RY[k] * RY[k] + RZ[k] * RZ[k]);
        if (j < 0 || !(L > 1e-9f) || L >= c->h) continue; /* j < 0: a partner gone since the last prune */
        /* Eq. 16: d_ij = vbar_j grad W(x_ij); x_ij = X_i - X_j = -ref */
        const float gm = u->vbar[BJ[k]] * c->cg * cos_g(L, c->h) / L;
        const float d[3] = {gm * RX[k], gm * RY[k], gm * RZ[k]};
        /* Eq. 15: u_ji = r_j - r_i + x_ij */
        const float uj[3] = {p->x[j] - p->x[i] - RX[k], p->y[j] - p->y[i] - RY[k], p->z[j] - p->z[i] - RZ[k]};
        for (int a = 0; a < 3; a++)
            for (int bb = 0; bb < 3; bb++) G[a][bb] += d[a] * uj[bb];
    }
}

void fs__unified_strain(float G[3][3], float eps[3][3]) {
    for (int a = 0; a < 3; a++)
        for (int bb = 0; bb < 3; bb++)
            eps[a][bb] = 0.5f * (G[a][bb] + G[bb][a] + G[a][0] * G[bb][0] + G[a][1] * G[bb][1] + G[a][2] * G[bb][2]);
}

void fs__unified_elastic_stress(const uctx *x, int i) {
    const fs_world *w = x->w;
    ustate *u = x->u;
    const uconst *c = &x->c;
    const int s = w->p.slot[i], m = w->p.mat[i];
    float G[3][3], eps[3][3];
    fs__unified_grad_u(w, u, c, i, G);
    fs__unified_strain(G, eps);
    /* von Mises plasticity (O'Brien et al. 2002, the paper's ref. 28):
     * the elastic strain is the total minus the plastic strain; its
     * deviatoric part beyond the elastic limit flows into the plastic
     * strain, which stays within the plastic limit */
    float *ep = u->ep + (size_t)s * 6;
    const float plim = c->plim[m];
    if (plim > 0.0f) {
        float ee[6] = {eps[0][0] - ep[0], eps[1][1] - ep[1], eps[2][2] - ep[2],
                       eps[0][1] - ep[3], eps[1][2] - ep[4], eps[2][0] - ep[5]};
        float tr = (ee[0] + ee[1] + ee[2]) * (1.0f / 3.0f);
        float dv[6] = {ee[0] - tr, ee[1] - tr, ee[2] - tr, ee[3], ee[4], ee[5]};
        float nrm = sqrtf(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2] +
                          2.0f * (dv[3] * dv[3] + dv[4] * dv[4] + dv[5] * dv[5]));
        if (nrm > c->elim[m]) {
            float f = (nrm - c->elim[m]) / nrm;
            for (int q = 0; q < 6; q++) ep[q] += f * dv[q];
            float pn = sqrtf(ep[0] * ep[0] + ep[1] * ep[1] + ep[2] * ep[2] +
                             2.0f * (ep[3] * ep[3] + ep[4] * ep[4] + ep[5] * ep[5]));
            if (pn > plim)
                for (int q = 0; q < 6; q++) ep[q] *= plim / pn;
        }
    }
    float ee[3][3] = {{eps[0][0] - ep[0], eps[0][1] - ep[3], eps[0][2] - ep[5]},
                      {eps[1][0] - ep[3], eps[1][1] - ep[1], eps[1][2] - ep[4]},
                      {eps[2][0] - ep[5], eps[2][1] - ep[4], eps[2][2] - ep[2]}};
    /* Hooke, isotropic: sigma = lambda tr(eps) I + 2 mu eps */
    const float E = u->young[s], nu = c->pois[m];
    const float lam = E * nu / ((1.0f + nu) * (1.0f - 2.0f * nu)), mu2 = E / (1.0f + nu);
    const float tr = ee[0][0] + ee[1][1] + ee[2][2];
    float sg[3][3];
    for (int a = 0; a < 3; a++)
        for (int bb = 0; bb < 3; bb++) sg[a][bb] = mu2 * ee[a][bb] + (a == bb ? lam * tr : 0.0f);
    /* Eq. 12: F_ji = -vbar_i (I + grad u_i^T) sigma_i d_ij.  (The paper
     * writes 2 vbar_i for a strain without the 1/2; with
     * eps = (G + G^T + G G^T) / 2 the gradient of Eq. 10 is this.)
     * grad u^T[a][k] = G[k][a]. */
    float *A = u->A + (size_t)i * 9;
    const float vb = u->vbar[s];
    for (int a = 0; a < 3; a++)
        for (int bb = 0; bb < 3; bb++) {
            float t = sg[a][bb] + G[0][a] * sg[0][bb] + G[1][a] * sg[1][bb] + G[2][a] * sg[2][bb];
            A[a * 3 + bb] = -vb * t;
        }
    u->hasA[i] = 1;
}
