// kernels/ciede.cu's device code on the host (see cuda_host_shim.h), driven by
// tests/cuda_source_on_host.rs over stdin/stdout, numbers as hexadecimal bit patterns.
//   math: lines "f x y" (f: 0 exp, 1 pow, 2 sin, 3 cos, 4 atan2, 5 powf; x, y as u64 bits; powf's
//         as f32 bits) -> one result's bits a line.
//   frame: "w h bpc layout" then reference Y, Cb, Cr and distorted Y, Cb, Cr as decimal samples
//         (chroma at libvmaf's size), each plane tightly packed -> the double sum of every
//         position's ΔE00 in raster order, as u64 bits.
#include "cuda_host_shim.h"
#include "ciede.cu"
#include <cstdio>
#include <vector>

static int math_mode() {
    int f;
    unsigned long long x, y;
    while (scanf("%d %llx %llx", &f, &x, &y) == 3) {
        const double a = __longlong_as_double((long long)x), b = __longlong_as_double((long long)y);
        unsigned long long r;
        switch (f) {
        case 0: r = (unsigned long long)__double_as_longlong(cm_exp(a)); break;
        case 1: r = (unsigned long long)__double_as_longlong(cm_pow(a, b)); break;
        case 2: r = (unsigned long long)__double_as_longlong(cm_sin(a)); break;
        case 3: r = (unsigned long long)__double_as_longlong(cm_cos(a)); break;
        case 4: r = (unsigned long long)__double_as_longlong(cm_atan2(a, b)); break;
        default: {
            float fx, fy;
            const uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
            memcpy(&fx, &ux, 4);
            memcpy(&fy, &uy, 4);
            r = __float_as_uint(cm_powf(fx, fy));
        }
        }
        printf("%llx\n", r);
    }
    return 0;
}

template <typename T>
static void planes(std::vector<std::vector<T>> &v, const int (&sizes)[6]) {
    for (int p = 0; p < 6; ++p) {
        v[p].resize(sizes[p]);
        for (int k = 0; k < sizes[p]; ++k) {
            unsigned s;
            if (scanf("%u", &s) != 1) exit(2);
            v[p][k] = (T)s;
        }
    }
}

template <typename T>
static int frame(int w, int h, int bpc, int layout) {
    const int cw = layout == 2 ? w : w >> 1, ch = layout == 0 ? h >> 1 : h;
    const int sizes[6] = {w * h, cw * ch, cw * ch, w * h, cw * ch, cw * ch};
    std::vector<std::vector<T>> v(6);
    planes(v, sizes);
    auto plane = [&](int p, int width) {
        return SrcPlane{(uint64_t)(uintptr_t)v[p].data(), (uint64_t)width * sizeof(T), 0, 0};
    };
    std::vector<float> terms((size_t)w * h);
    CiedeArgs a{};
    a.reference = plane(0, w);
    a.ref_chroma[0] = plane(1, cw);
    a.ref_chroma[1] = plane(2, cw);
    a.distorted = plane(3, w);
    a.dis_chroma[0] = plane(4, cw);
    a.dis_chroma[1] = plane(5, cw);
    a.terms = (uint64_t)(uintptr_t)terms.data();
    a.w = w;
    a.h = h;
    a.cw = cw;
    a.ch = ch;
    a.pitch = (cw + 31) & ~31;
    a.step_ref = a.step_dis = 1;
    a.bpc = bpc;
    a.layout = layout;
    blockDim.x = 1;
    threadIdx.x = 0;
    for (int i = 0; i < h; ++i) {
        for (int j = 0; j < w; ++j) {
            blockIdx.x = j;
            blockIdx.y = i;
            ciede_impl<T>(a);
        }
    }
    double sum = 0.0;
    for (float t : terms) sum = __dadd_rn(sum, (double)t);
    printf("%llx\n", (unsigned long long)__double_as_longlong(sum));
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "math")) return math_mode();
    int w, h, bpc, layout;
    if (scanf("%d %d %d %d", &w, &h, &bpc, &layout) != 4) return 2;
    return bpc == 8 ? frame<uint8_t>(w, h, bpc, layout) : frame<uint16_t>(w, h, bpc, layout);
}
