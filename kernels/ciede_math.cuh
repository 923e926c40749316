// ciede's elementary functions on the device. Specification: src/feature/ciede/math.rs, whose
// every operation this file repeats in the same order (plain IEEE double operators; the fatbin
// is built with --fmad=false, so nothing is contracted into an FMA), so both give the same bits.
// CUDA's own exp/pow/sin/cos/atan2 are not used: they differ from any host libm.
#pragma once
#include "common.cuh"

#define CM_LN2_HI 0.6931471804855391
#define CM_LN2_LO 7.440617110012397e-11
#define CM_INV_LN2 1.4426950408889634
#define CM_PIO2_1 1.5707963267341256
#define CM_PIO2_2 6.077100506303966e-11
#define CM_PIO2_3 2.0222662487959506e-21
#define CM_TWO_OVER_PI 0.6366197723675814
#define CM_PI_HI 3.141592653589793
#define CM_PI_LO 1.2246467991473532e-16
#define CM_PIO2_HI 1.5707963267948966
#define CM_PIO2_LO 6.123233995736766e-17
#define CM_PIO4_HI 0.7853981633974483
#define CM_PIO4_LO 3.061616997868383e-17
#define CM_TAN_PI_8 0.41421356237309503
#define CM_SQRT2 1.4142135623730951

__device__ static const double CM_EXP_C[12] = {
    0.5, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0,
    1.0 / 362880.0, 1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0};
__device__ static const double CM_SIN_C[9] = {
    -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0, -1.0 / 39916800.0,
    1.0 / 6227020800.0, -1.0 / 1307674368000.0, 1.0 / 355687428096000.0,
    -1.0 / 121645100408832000.0};
__device__ static const double CM_COS_C[9] = {
    1.0 / 24.0, -1.0 / 720.0, 1.0 / 40320.0, -1.0 / 3628800.0, 1.0 / 479001600.0,
    -1.0 / 87178291200.0, 1.0 / 20922789888000.0, -1.0 / 6402373705728000.0,
    1.0 / 2432902008176640000.0};
__device__ static const double CM_LN_C[12] = {
    2.0 / 3.0, 2.0 / 5.0, 2.0 / 7.0, 2.0 / 9.0, 2.0 / 11.0, 2.0 / 13.0,
    2.0 / 15.0, 2.0 / 17.0, 2.0 / 19.0, 2.0 / 21.0, 2.0 / 23.0, 2.0 / 25.0};
__device__ static const double CM_ATAN_C[21] = {
    -1.0 / 3.0, 1.0 / 5.0, -1.0 / 7.0, 1.0 / 9.0, -1.0 / 11.0, 1.0 / 13.0, -1.0 / 15.0,
    1.0 / 17.0, -1.0 / 19.0, 1.0 / 21.0, -1.0 / 23.0, 1.0 / 25.0, -1.0 / 27.0, 1.0 / 29.0,
    -1.0 / 31.0, 1.0 / 33.0, -1.0 / 35.0, 1.0 / 37.0, -1.0 / 39.0, 1.0 / 41.0, -1.0 / 43.0};

template <int N>
VMAF_RS_DEV double cm_horner(const double (&c)[N], double z) {
    double acc = 0.0;
#pragma unroll
    for (int i = N - 1; i >= 0; --i) acc = c[i] + z * acc;
    return acc;
}

struct CmPair {
    double hi, lo;
};

VMAF_RS_DEV CmPair cm_two_sum(double a, double b) {
    const double s = a + b;
    const double bb = s - a;
    return {s, (a - (s - bb)) + (b - bb)};
}

VMAF_RS_DEV CmPair cm_split(double a) {
    const double c = 134217729.0 * a;
    const double hi = c - (c - a);
    return {hi, a - hi};
}

VMAF_RS_DEV CmPair cm_two_prod(double a, double b) {
    const double p = a * b;
    const CmPair x = cm_split(a), y = cm_split(b);
    return {p, ((x.hi * y.hi - p) + x.hi * y.lo + x.lo * y.hi) + x.lo * y.lo};
}

VMAF_RS_DEV double cm_pow2(long long k) {
    return __longlong_as_double((long long)((unsigned long long)(k + 1023) << 52));
}

VMAF_RS_DEV double cm_exp_dd(double hi, double lo) {
    if (isnan(hi)) return hi;
    if (hi > 709.8) return __longlong_as_double(0x7ff0000000000000ll);
    if (hi < -745.2) return 0.0;
    double k = floor(hi * CM_INV_LN2 + 0.5);
    const double r_hi = hi - k * CM_LN2_HI;
    const CmPair re = cm_two_sum(r_hi, -(k * CM_LN2_LO));
    const double r = re.hi;
    const double r_lo = re.lo + lo;
    const double p = r * r * cm_horner(CM_EXP_C, r);
    const CmPair s = cm_two_sum(1.0, r);
    const double y = s.hi + (s.lo + (p + r_lo * (s.hi + p)));
    const long long ki = (long long)k;
    if (ki > 1023) return y * cm_pow2(ki - 1) * 2.0;
    if (ki < -1021) return y * cm_pow2(ki + 1000) * cm_pow2(-1000);
    return y * cm_pow2(ki);
}

VMAF_RS_DEV double cm_exp(double x) { return cm_exp_dd(x, 0.0); }

VMAF_RS_DEV CmPair cm_ln_dd(double x) {
    unsigned long long bits = (unsigned long long)__double_as_longlong(x);
    long long e = 0;
    if ((bits >> 52) == 0) {
        bits = (unsigned long long)__double_as_longlong(x * cm_pow2(54));
        e = -54;
    }
    e += (long long)((bits >> 52) & 0x7ff) - 1023;
    double m = __longlong_as_double(
        (long long)((bits & ((1ull << 52) - 1)) | (1023ull << 52)));
    if (m > CM_SQRT2) {
        m *= 0.5;
        e += 1;
    }
    const double f = m - 1.0;
    const CmPair d = cm_two_sum(2.0, f);
    const double s = f / d.hi;
    const CmPair p = cm_two_prod(s, d.hi);
    const double s_lo = (((f - p.hi) - p.lo) - s * d.lo) / d.hi;
    const double z = s * s;
    const double tail = s * z * cm_horner(CM_LN_C, z);
    const CmPair hl = cm_two_sum(2.0 * s, 2.0 * s_lo + tail);
    const double ke = (double)e;
    const CmPair ab = cm_two_sum(ke * CM_LN2_HI, hl.hi);
    return cm_two_sum(ab.hi, ab.lo + (hl.lo + ke * CM_LN2_LO));
}

VMAF_RS_DEV bool cm_is_inf(double x) { return isinf(x); }
VMAF_RS_DEV double cm_fract(double x) { return x - trunc(x); }

VMAF_RS_DEV double cm_pow(double x, double y) {
    const double inf = __longlong_as_double(0x7ff0000000000000ll);
    const double nan = __longlong_as_double(0x7ff8000000000000ll);
    if (y == 0.0 || x == 1.0) return 1.0;
    if (isnan(x) || isnan(y)) return nan;
    const double ax = fabs(x);
    const bool neg = signbit(x) && cm_fract(y) == 0.0 && cm_fract(y * 0.5) != 0.0;
    const double sign = neg ? -1.0 : 1.0;
    if (x < 0.0 && cm_fract(y) != 0.0 && !cm_is_inf(y)) return nan;
    if (cm_is_inf(y)) {
        if (ax == 1.0) return 1.0;
        if ((ax > 1.0) == (y > 0.0)) return inf;
        return 0.0;
    }
    if (ax == 0.0 || cm_is_inf(ax)) {
        const bool big = (ax == 0.0) == (y < 0.0);
        return sign * (big ? inf : 0.0);
    }
    const CmPair l = cm_ln_dd(ax);
    const CmPair p = cm_two_prod(y, l.hi);
    return sign * cm_exp_dd(p.hi, p.lo + y * l.lo);
}

VMAF_RS_DEV float cm_powf(float x, float y) { return (float)cm_pow((double)x, (double)y); }

struct CmReduced {
    double r, d;
    int q;
};

VMAF_RS_DEV CmReduced cm_reduce_pio2(double x) {
    const double k = floor(x * CM_TWO_OVER_PI + 0.5);
    const double w = x - k * CM_PIO2_1;
    const CmPair t = cm_two_sum(w, -(k * CM_PIO2_2));
    const CmPair r = cm_two_sum(t.hi, t.lo - k * CM_PIO2_3);
    return {r.hi, r.lo, (int)((long long)k & 3)};
}

VMAF_RS_DEV double cm_sin_k(double r, double d) {
    const double z = r * r;
    const double tail = r * z * cm_horner(CM_SIN_C, z);
    return r + (tail + d * (1.0 - 0.5 * z));
}

VMAF_RS_DEV double cm_cos_k(double r, double d) {
    const double z = r * r;
    const double hz = 0.5 * z;
    const double w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + (z * z * cm_horner(CM_COS_C, z) - r * d));
}

VMAF_RS_DEV double cm_sin(double x) {
    if (!isfinite(x)) return __longlong_as_double(0x7ff8000000000000ll);
    const CmReduced v = cm_reduce_pio2(x);
    switch (v.q) {
    case 0: return cm_sin_k(v.r, v.d);
    case 1: return cm_cos_k(v.r, v.d);
    case 2: return -cm_sin_k(v.r, v.d);
    default: return -cm_cos_k(v.r, v.d);
    }
}

VMAF_RS_DEV double cm_cos(double x) {
    if (!isfinite(x)) return __longlong_as_double(0x7ff8000000000000ll);
    const CmReduced v = cm_reduce_pio2(x);
    switch (v.q) {
    case 0: return cm_cos_k(v.r, v.d);
    case 1: return -cm_sin_k(v.r, v.d);
    case 2: return -cm_cos_k(v.r, v.d);
    default: return cm_sin_k(v.r, v.d);
    }
}

VMAF_RS_DEV double cm_atan_k(double u, double d) {
    const double z = u * u;
    return u + (u * z * cm_horner(CM_ATAN_C, z) + d / (1.0 + z));
}

VMAF_RS_DEV CmPair cm_div_dd(double n, double q) {
    const double t = n / q;
    const CmPair p = cm_two_prod(t, q);
    return {t, ((n - p.hi) - p.lo) / q};
}

VMAF_RS_DEV double cm_atan2(double y, double x) {
    if (isnan(x) || isnan(y)) return __longlong_as_double(0x7ff8000000000000ll);
    const double ax = fabs(x), ay = fabs(y);
    double a;
    if (ay == 0.0) {
        a = signbit(x) ? CM_PI_HI : 0.0;
    } else if (cm_is_inf(ax) || cm_is_inf(ay)) {
        if (cm_is_inf(ax) && cm_is_inf(ay)) a = x < 0.0 ? 3.0 * CM_PIO4_HI : CM_PIO4_HI;
        else if (cm_is_inf(ax)) a = x < 0.0 ? CM_PI_HI : 0.0;
        else a = CM_PIO2_HI;
    } else if (ax == 0.0) {
        a = CM_PIO2_HI;
    } else {
        const bool swap = ay > ax;
        const double n = swap ? ax : ay, q = swap ? ay : ax;
        const CmPair t = cm_div_dd(n, q);
        CmPair h;
        if (t.hi > CM_TAN_PI_8) {
            const CmPair num = cm_two_sum(t.hi, -1.0);
            const CmPair den = cm_two_sum(t.hi, 1.0);
            const CmPair u = cm_div_dd(num.hi, den.hi);
            const double u_lo = u.lo + ((num.lo + t.lo) - u.hi * (den.lo + t.lo)) / den.hi;
            h = cm_two_sum(CM_PIO4_HI, cm_atan_k(u.hi, u_lo) + CM_PIO4_LO);
        } else {
            h = cm_two_sum(cm_atan_k(t.hi, t.lo), 0.0);
        }
        if (swap) {
            const CmPair s = cm_two_sum(CM_PIO2_HI, -h.hi);
            h = {s.hi, s.lo + (CM_PIO2_LO - h.lo)};
        }
        if (x < 0.0) {
            const CmPair s = cm_two_sum(CM_PI_HI, -h.hi);
            h = {s.hi, s.lo + (CM_PI_LO - h.lo)};
        }
        a = h.hi + h.lo;
    }
    return signbit(y) ? -a : a;
}
