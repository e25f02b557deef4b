/* The kernel network of the learned policies (a per-job MLP nf -> 32 -> 16 -> 8 -> 1, ReLU between
 * layers; nf = 8 for job selection as in RLScheduler, 6 for backfilling as in RLBackfilling) over up to 128 rows at a time. Activations are kept feature-major so that
 * every inner loop runs over the rows (long, contiguous: the compiler vectorises it); each row's
 * sums are still taken in input order, so a row's score does not depend on the other rows.
 * Weights are row-major (inputs x outputs). */
#ifndef PBF_KERNEL_H
#define PBF_KERNEL_H

#define PBF_KERNEL_BLOCK 128
#define PBF_KERNEL_MAX_IN 8

/* out[o][r] = (relu)(b[o] + sum_i in[i][r] * w[i * outs + o]) for n rows; in and out are
 * feature-major with a row stride of PBF_KERNEL_BLOCK */
static inline void pbf_dense(long n, int ins, int outs, const float* in, const float* w, const float* b,
                             float* out, int relu) {
    for (int o = 0; o < outs; o++) {
        float* h = out + (long)o * PBF_KERNEL_BLOCK;
        for (long r = 0; r < n; r++) h[r] = b[o];
        for (int i = 0; i < ins; i++) {
            const float wi = w[i * outs + o], *a = in + (long)i * PBF_KERNEL_BLOCK;
            for (long r = 0; r < n; r++) h[r] += a[r] * wi;
        }
        if (relu)
            for (long r = 0; r < n; r++) h[r] = h[r] > 0 ? h[r] : 0;
    }
}

static void pbf_kernel_block(long n, int nf, const float* x, const float* w0, const float* b0, const float* w1,
                             const float* b1, const float* w2, const float* b2, const float* w3,
                             const float* b3, float* out) {
    float xt[PBF_KERNEL_MAX_IN][PBF_KERNEL_BLOCK], h0[32][PBF_KERNEL_BLOCK], h1[16][PBF_KERNEL_BLOCK], h2[8][PBF_KERNEL_BLOCK];
    float s[PBF_KERNEL_BLOCK];
    for (long r = 0; r < n; r++)
        for (int i = 0; i < nf; i++) xt[i][r] = x[r * nf + i];
    pbf_dense(n, nf, 32, &xt[0][0], w0, b0, &h0[0][0], 1);
    pbf_dense(n, 32, 16, &h0[0][0], w1, b1, &h1[0][0], 1);
    pbf_dense(n, 16, 8, &h1[0][0], w2, b2, &h2[0][0], 1);
    pbf_dense(n, 8, 1, &h2[0][0], w3, b3, s, 0);
    for (long r = 0; r < n; r++) out[r] = s[r];
}

static void pbf_kernel_scores(long n, int nf, const float* x, const float* w0, const float* b0, const float* w1,
                              const float* b1, const float* w2, const float* b2, const float* w3,
                              const float* b3, float* out) {
    for (long r = 0; r < n; r += PBF_KERNEL_BLOCK) {
        long m = n - r < PBF_KERNEL_BLOCK ? n - r : PBF_KERNEL_BLOCK;
        pbf_kernel_block(m, nf, x + r * nf, w0, b0, w1, b1, w2, b2, w3, b3, out + r);
    }
}

#endif
