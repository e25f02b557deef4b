/* The kernel network of the learned policies (RLScheduler's per-job MLP 8 -> 32 -> 16 -> 8 -> 1,
 * ReLU between layers) over up to 128 rows at a time. Activations are kept feature-major so that
 * every inner loop runs over the rows (long, contiguous: the compiler vectorises it); each row's
 * sums are still taken in input order, so a row's score does not depend on the other rows.
 * Weights are row-major (inputs x outputs). */
#ifndef PBF_KERNEL_H
#define PBF_KERNEL_H

#define PBF_KERNEL_BLOCK 128

static void pbf_kernel_block(long n, const float* x, const float* w0, const float* b0, const float* w1,
                             const float* b1, const float* w2, const float* b2, const float* w3,
                             const float* b3, float* out) {
    float xt[8][PBF_KERNEL_BLOCK], h0[32][PBF_KERNEL_BLOCK], h1[16][PBF_KERNEL_BLOCK], h2[8][PBF_KERNEL_BLOCK];
    for (long r = 0; r < n; r++)
        for (int i = 0; i < 8; i++) xt[i][r] = x[r * 8 + i];
    for (int o = 0; o < 32; o++) {
        float* h = h0[o];
        for (long r = 0; r < n; r++) h[r] = b0[o];
        for (int i = 0; i < 8; i++) {
            const float w = w0[i * 32 + o], *a = xt[i];
            for (long r = 0; r < n; r++) h[r] += a[r] * w;
        }
        for (long r = 0; r < n; r++) h[r] = h[r] > 0 ? h[r] : 0;
    }
    for (int o = 0; o < 16; o++) {
        float* h = h1[o];
        for (long r = 0; r < n; r++) h[r] = b1[o];
        for (int i = 0; i < 32; i++) {
            const float w = w1[i * 16 + o], *a = h0[i];
            for (long r = 0; r < n; r++) h[r] += a[r] * w;
        }
        for (long r = 0; r < n; r++) h[r] = h[r] > 0 ? h[r] : 0;
    }
    for (int o = 0; o < 8; o++) {
        float* h = h2[o];
        for (long r = 0; r < n; r++) h[r] = b2[o];
        for (int i = 0; i < 16; i++) {
            const float w = w2[i * 8 + o], *a = h1[i];
            for (long r = 0; r < n; r++) h[r] += a[r] * w;
        }
        for (long r = 0; r < n; r++) h[r] = h[r] > 0 ? h[r] : 0;
    }
    for (long r = 0; r < n; r++) out[r] = b3[0];
    for (int i = 0; i < 8; i++) {
        const float w = w3[i], *a = h2[i];
        for (long r = 0; r < n; r++) out[r] += a[r] * w;
    }
}

static void pbf_kernel_scores(long n, const float* x, const float* w0, const float* b0, const float* w1,
                              const float* b1, const float* w2, const float* b2, const float* w3,
                              const float* b3, float* out) {
    for (long r = 0; r < n; r += PBF_KERNEL_BLOCK) {
        long m = n - r < PBF_KERNEL_BLOCK ? n - r : PBF_KERNEL_BLOCK;
        pbf_kernel_block(m, x + r * 8, w0, b0, w1, b1, w2, b2, w3, b3, out + r);
    }
}

#endif
