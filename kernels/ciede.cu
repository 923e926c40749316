// ciede: libvmaf's CIEDE2000 score. Specification: src/feature/ciede/mod.rs (`score`, `lab`,
// `ciede2000` and their helpers) with the functions of src/feature/ciede/math.rs
// (ciede_math.cuh here).
//
// One thread per luma position: the chroma samples libvmaf's upsampling reads (emulated on its
// own picture layout: Cb then Cr, rows align32(cw) apart, zeros past each row's samples and past
// the Cr plane), both colours to L*a*b* and their ΔE00, each step in the CPU's float/double
// operations and order, written to the term buffer at y * w + x. The CPU adds those terms into
// one double running sum in raster order, so a second kernel adds them from 0 in that order on
// one thread (the others stage tiles in shared memory).
#include "ciede_math.cuh"

#define CIEDE_SUM_THREADS 256
#define CIEDE_SUM_TILE 2048

struct CiedeArgs {
    SrcPlane reference;
    SrcPlane distorted;
    SrcPlane ref_chroma[2];  // Cb, Cr (an interleaved plane: both at its base, Cr one sample in)
    SrcPlane dis_chroma[2];
    uint64_t terms;          // float[w * h]
    int32_t w, h;            // luma size
    int32_t cw, ch;          // libvmaf's chroma plane size (w >> 1 where subsampled)
    int32_t pitch;           // libvmaf's chroma row pitch, align32(cw), in samples
    int32_t step_ref;        // sample x of a chroma row is element x * step
    int32_t step_dis;
    int32_t bpc;
    int32_t layout;          // 0: 4:2:0, 1: 4:2:2, 2: 4:4:4
    int32_t pad_;
};
static_assert(sizeof(CiedeArgs) == 192, "ABI: keep in sync with src/cuda/kernels.rs");

struct CiedeSumArgs {
    uint64_t terms;  // float[n], raster order
    uint64_t out;    // result slot: the double sum's bits
    int32_t n;
    int32_t pad_;
};
static_assert(sizeof(CiedeSumArgs) == 24, "ABI: keep in sync with src/cuda/kernels.rs");

#define CIEDE_PI 3.141592653589793

struct CiedeLab {
    float l, a, b;
};

// mod.rs `ChromaBuf::at`: the sample at linear offset `off` of libvmaf's chroma buffer.
template <typename T>
VMAF_RS_DEV float ciede_chroma_at(const SrcPlane (&planes)[2], int step, int cw, int ch,
                                  int pitch, int p, long long off) {
    const long long plane_len = (long long)pitch * ch;
    if (off >= plane_len) {
        p += 1;
        off -= plane_len;
    }
    if (p >= 2 || off >= plane_len) return 0.0f;
    const int row = (int)(off / pitch), col = (int)(off % pitch);
    if (col >= cw) return 0.0f;
    return (float)load_px<T>(planes[p], col * step, row);
}

VMAF_RS_DEV double ciede_linearise(double c) {
    if (c > 10.0 / 255.0) return cm_pow((c + 0.055) * (1.0 / 1.055), 2.4);
    return c * (1.0 / 12.92);
}

VMAF_RS_DEV float ciede_lab_f(double c) {
    const double kappa = 24389.0 / 27.0;
    const double epsilon = 216.0 / 24389.0;
    if (c > epsilon) return (float)cm_pow(c, 1.0 / 3.0);
    return (float)((kappa * c + 16.0) * (1.0 / 116.0));
}

VMAF_RS_DEV CiedeLab ciede_lab(float yf, float uf, float vf, int bpc) {
    const double scale = (double)(1u << (bpc - 8));
    const double y = ((double)yf - 16.0 * scale) * (1.0 / (219.0 * scale));
    const double u = ((double)uf - 128.0 * scale) * (1.0 / (224.0 * scale));
    const double v = ((double)vf - 128.0 * scale) * (1.0 / (224.0 * scale));
    const double r = ciede_linearise(y + 1.28033 * v);
    const double g = ciede_linearise(y - 0.21482 * u - 0.38059 * v);
    const double b = ciede_linearise(y + 2.12798 * u);
    const double x = r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894;
    const double yy = r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958;
    const double z = r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677;
    const double xl = (double)ciede_lab_f(x * (1.0 / 0.95047));
    const double yl = (double)ciede_lab_f(yy);
    const double zl = (double)ciede_lab_f(z * (1.0 / 1.08883));
    return {(float)((116.0 * yl) - 16.0), (float)(500.0 * (xl - yl)), (float)(200.0 * (yl - zl))};
}

VMAF_RS_DEV float ciede_h_prime(float b, float a) {
    if (b == 0.0f && a == 0.0f) return 0.0f;
    float h = (float)cm_atan2((double)b, (double)a);
    if (h < 0.0f) h = (float)((double)h + 2.0 * CIEDE_PI);
    return h;
}

VMAF_RS_DEV float ciede_delta_h_prime(float c1, float c2, float h1, float h2) {
    if (c1 == 0.0f || c2 == 0.0f) return 0.0f;
    const float d = h2 - h1;
    if ((double)fabsf(h1 - h2) <= CIEDE_PI) return d;
    if (h2 <= h1) return (float)((double)d + 2.0 * CIEDE_PI);
    return (float)((double)d - 2.0 * CIEDE_PI);
}

VMAF_RS_DEV float ciede_h_bar_prime(float h1, float h2) {
    const double s = (double)(h1 + h2);
    if ((double)fabsf(h1 - h2) > CIEDE_PI) return (float)((s + 2.0 * CIEDE_PI) / 2.0);
    return (float)(s / 2.0);
}

VMAF_RS_DEV float ciede_upcase_t(float hf) {
    const double h = (double)hf;
    return (float)(1.0 - 0.17 * cm_cos(h - CIEDE_PI / 6.0) + 0.24 * cm_cos(2.0 * h) +
                   0.32 * cm_cos(3.0 * h + CIEDE_PI / 30.0) -
                   0.20 * cm_cos(4.0 * h - 7.0 * CIEDE_PI / 20.0));
}

VMAF_RS_DEV float ciede_r_sub_t(float c_bar_prime, float h_bar_prime) {
    const float deg = (float)((double)h_bar_prime * (180.0 / CIEDE_PI));
    const float t = (float)(((double)deg - 275.0) * (1.0 / 25.0));
    const float c7 = cm_powf(c_bar_prime, 7.0f);
    const float ratio = c7 / (c7 + 6103515625.0f);
    const float angle = (float)(60.0 * cm_exp((double)(-(t * t))));
    const float rad = (float)((double)angle * (CIEDE_PI / 180.0));
    return (float)(-2.0 * sqrt((double)ratio) * cm_sin((double)rad));
}

VMAF_RS_DEV double ciede_sq(float v) { return (double)v * (double)v; }

VMAF_RS_DEV float ciede_2000(CiedeLab c1, CiedeLab c2) {
    const float kl = (float)0.65, kc = 1.0f, kh = 4.0f;
    const float dl = c2.l - c1.l;
    const float l_bar = (c1.l + c2.l) / 2.0f;
    const float ch1 = (float)sqrt(ciede_sq(c1.a) + ciede_sq(c1.b));
    const float ch2 = (float)sqrt(ciede_sq(c2.a) + ciede_sq(c2.b));
    const float c_bar = (ch1 + ch2) / 2.0f;
    const double c7 = cm_pow((double)c_bar, 7.0);
    const double g = 1.0 - sqrt(c7 / (c7 + 6103515625.0));
    const float a1 = (float)((double)c1.a + (double)(c1.a / 2.0f) * g);
    const float a2 = (float)((double)c2.a + (double)(c2.a / 2.0f) * g);
    const float cp1 = (float)sqrt(ciede_sq(a1) + ciede_sq(c1.b));
    const float cp2 = (float)sqrt(ciede_sq(a2) + ciede_sq(c2.b));
    const float c_bar_prime = (cp1 + cp2) / 2.0f;
    const float dc = cp2 - cp1;
    const double l50 = ciede_sq(l_bar - 50.0f);
    const float s_l = (float)(1.0 + (0.015 * l50) / sqrt(20.0 + l50));
    const float s_c = (float)(1.0 + 0.045 * (double)c_bar_prime);
    const float h1 = ciede_h_prime(c1.b, a1);
    const float h2 = ciede_h_prime(c2.b, a2);
    const float dh = ciede_delta_h_prime(ch1, ch2, h1, h2);
    const float d_upper_h = (float)(2.0 * sqrt((double)(cp1 * cp2)) * cm_sin((double)dh / 2.0));
    const float h_bar = ciede_h_bar_prime(h1, h2);
    const float t = ciede_upcase_t(h_bar);
    const float s_h = (float)(1.0 + 0.015 * (double)c_bar_prime * (double)t);
    const float rt = ciede_r_sub_t(c_bar_prime, h_bar);
    const float lightness = dl / (kl * s_l);
    const float chroma = dc / (kc * s_c);
    const float hue = d_upper_h / (kh * s_h);
    return (float)sqrt(ciede_sq(lightness) + ciede_sq(chroma) + ciede_sq(hue) +
                       (double)(rt * chroma * hue));
}

template <typename T>
VMAF_RS_DEV void ciede_impl(const CiedeArgs &a) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= a.w) return;
    long long off;
    if (a.layout == 0) off = (long long)(i / 2) * a.pitch + j / 2;
    else if (a.layout == 1) off = (long long)(i / 2) * a.pitch + j;
    else off = (long long)i * a.pitch + j;
    const CiedeLab r = ciede_lab(
        (float)load_px<T>(a.reference, j, i),
        ciede_chroma_at<T>(a.ref_chroma, a.step_ref, a.cw, a.ch, a.pitch, 0, off),
        ciede_chroma_at<T>(a.ref_chroma, a.step_ref, a.cw, a.ch, a.pitch, 1, off), a.bpc);
    const CiedeLab d = ciede_lab(
        (float)load_px<T>(a.distorted, j, i),
        ciede_chroma_at<T>(a.dis_chroma, a.step_dis, a.cw, a.ch, a.pitch, 0, off),
        ciede_chroma_at<T>(a.dis_chroma, a.step_dis, a.cw, a.ch, a.pitch, 1, off), a.bpc);
    reinterpret_cast<float *>(a.terms)[(size_t)i * a.w + j] = ciede_2000(r, d);
}

// grid (ceil(w / BX), h), block BX.
extern "C" __global__ void vmaf_ciede_u8(CiedeArgs a) { ciede_impl<uint8_t>(a); }
extern "C" __global__ void vmaf_ciede_u16(CiedeArgs a) { ciede_impl<uint16_t>(a); }

// grid 1, block CIEDE_SUM_THREADS: score's `sum += term as f64` from 0 in raster order.
extern "C" __global__ void __launch_bounds__(CIEDE_SUM_THREADS) vmaf_ciede_sum(CiedeSumArgs a) {
    __shared__ float buf[2][CIEDE_SUM_TILE];
    const double sum = ordered_sum<double, CIEDE_SUM_THREADS, CIEDE_SUM_TILE>(
        reinterpret_cast<const float *>(a.terms), a.n, buf);
    if (threadIdx.x == 0) {
        reinterpret_cast<unsigned long long *>(a.out)[0] =
            (unsigned long long)__double_as_longlong(sum);
    }
}
