//! Contrast masking (libvmaf `adm_cm` / `i4_adm_cm`): the masking threshold of each sample's
//! 3x3 neighbourhood, subtracted from the masked signal, cubed and reduced to the integer
//! accumulation that becomes a scale's numerator (pooled in `pool.rs`).

use std::ops::Range;

use super::{half_pow2_u32, region_pool, CmShiftsS0};

/// The rows (or columns) libvmaf's `adm_cm` visits in a band of `n` with pooling bounds
/// `[lo, hi)`: the edge sample 0 if `lo == 0`, the interior `max(lo, 1) .. min(hi, n - 1)`, and
/// the edge sample `n - 1` if `hi > n - 1`.
fn cm_span(lo: usize, hi: usize, n: usize) -> impl Iterator<Item = usize> {
    let first = (lo == 0).then_some(0);
    let last = (hi > n - 1).then_some(n - 1);
    first
        .into_iter()
        .chain(lo.max(1)..hi.min(n - 1))
        .chain(last)
}

/// Neighbours `(before, after)` of index `i` in a band of `n` as libvmaf's masking threshold
/// mirrors them: `0 -> (1, 1)`, `n - 1 -> (n - 2, n - 1)`.
#[inline(always)]
fn cm_neighbours(i: usize, n: usize) -> (usize, usize) {
    let m = n - 1;
    if i == 0 {
        (1.min(m), 1.min(m))
    } else if i == m {
        (i - 1, m)
    } else {
        (i - 1, i + 1)
    }
}

/// The rows one call of [`cm_s0_with`] / [`cm_s123_with`] masks, of a band whose buffers hold
/// only some rows: `rows` (absolute band rows; the visited ones among them) and `base`, the band
/// row at each buffer's start. A strip of `rows` needs its neighbours, `rows.start - 1 ..=
/// rows.end` clamped to the band, in the buffers.
#[derive(Debug, Clone)]
pub struct CmRows {
    /// Band rows masked by this call.
    pub rows: Range<usize>,
    /// Band row held at offset 0 of the buffers.
    pub base: usize,
}

impl CmRows {
    /// Every row of an `h`-row band held whole.
    pub fn all(h: usize) -> Self {
        CmRows {
            rows: 0..h,
            base: 0,
        }
    }
}

/// Sum of the eight neighbours of `(i, j)` in the masker's filter sums ([`csf_s0`]'s `flt`),
/// mirrored at the edges, wrapping as libvmaf's `int32` threshold sum.
///
/// [`csf_s0`]: super::csf_s0
#[inline(always)]
fn neighbours8(
    flt: &[i32],
    stride: usize,
    rows: (usize, usize, usize),
    cols: (usize, usize, usize),
) -> i32 {
    let (u, c, d) = (rows.0 * stride, rows.1 * stride, rows.2 * stride);
    let (l, m, r) = cols;
    let s = [
        flt[u + l],
        flt[u + m],
        flt[u + r],
        flt[c + l],
        flt[c + r],
        flt[d + l],
        flt[d + m],
        flt[d + r],
    ];
    s.iter().fold(0i32, |acc, &x| acc.wrapping_add(x))
}

/// One contrast-masked term: `max(|x| - (thr << sub), 0)` cubed with libvmaf's rounding.
#[inline(always)]
fn cm_term(
    x: i32,
    thr: i32,
    sub: u32,
    sq_add: i64,
    sq_shift: u32,
    cub_add: i64,
    cub_shift: u32,
) -> i64 {
    let x = x.wrapping_abs().wrapping_sub(thr.wrapping_shl(sub)).max(0);
    let x_sq = ((x as i64 * x as i64 + sq_add) >> sq_shift) as i32;
    (x_sq as i64 * x as i64).wrapping_add(cub_add) >> (cub_shift & 63)
}

/// Integer part of the scale-0 numerator (libvmaf `adm_cm`): for every visited sample, the
/// masking threshold (the masker's filter sums `flt` over the eight neighbours plus its
/// `centre` sum, as [`csf_s0`](super::csf_s0) writes them) is subtracted from `|x * i_rfactor|`,
/// the excess cubed and summed per band, each row's sum rounded by `shifts.inner` bits.
#[allow(clippy::too_many_arguments)]
pub fn cm_s0(
    x_hvd: [&[i16]; 3],
    flt: &[i32],
    centre: &[i32],
    stride: usize,
    w: usize,
    h: usize,
    i_rfactor: [u16; 3],
    shifts: CmShiftsS0,
) -> [i64; 3] {
    cm_s0_with(
        cm_s0_interior,
        x_hvd,
        flt,
        centre,
        stride,
        (w, h),
        CmRows::all(h),
        i_rfactor,
        shifts,
    )
}

/// [`cm_s0`] with the interior columns of each row computed by `interior` (a peer of
/// [`cm_s0_interior`], as a SIMD level's kernel table passes it); the edge columns and the row
/// rounding stay here.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn cm_s0_with(
    interior: impl Fn(
        [&[i16]; 3],
        &[i32],
        &[i32],
        (usize, usize, usize),
        Range<usize>,
        [u16; 3],
        [u32; 3],
        [i64; 3],
    ) -> [i64; 3],
    x_hvd: [&[i16]; 3],
    flt: &[i32],
    centre: &[i32],
    stride: usize,
    (w, h): (usize, usize),
    window: CmRows,
    i_rfactor: [u16; 3],
    shifts: CmShiftsS0,
) -> [i64; 3] {
    let inner_add = half_pow2_u32(shifts.inner) as i64;
    let inner_shift = shifts.inner & 63;
    let cub_add = shifts.cub_add;
    let reg = region_pool(w, h);
    let mut accum = [0i64; 3];
    // The visited columns: edge 0, the interior run, edge w - 1 (see `cm_span`).
    let first = (reg.left == 0).then_some(0);
    let mid = reg.left.max(1)..reg.right.min(w - 1);
    let last = (reg.right > w - 1).then_some(w - 1);
    for i in cm_span(reg.top, reg.bottom, h).filter(|i| window.rows.contains(i)) {
        let (up, down) = cm_neighbours(i, h);
        let b = window.base;
        let rows = ((up - b) * stride, (i - b) * stride, (down - b) * stride);
        let mut inner = interior(
            x_hvd,
            flt,
            centre,
            rows,
            mid.clone(),
            i_rfactor,
            shifts.cub,
            cub_add,
        );
        for j in first.into_iter().chain(last) {
            let (l, r) = cm_neighbours(j, w);
            let t = cm_s0_pixel(
                x_hvd,
                flt,
                centre,
                rows,
                (l, j, r),
                i_rfactor,
                shifts.cub,
                cub_add,
            );
            for b in 0..3 {
                inner[b] = inner[b].wrapping_add(t[b]);
            }
        }
        for b in 0..3 {
            accum[b] = accum[b].wrapping_add(inner[b].wrapping_add(inner_add) >> inner_shift);
        }
    }
    accum
}

/// Scalar interior-column kernel of [`cm_s0`] (`adm::CmS0Interior`): one row's sums over the
/// columns `cols`.
#[allow(clippy::too_many_arguments)]
pub fn cm_s0_interior(
    x_hvd: [&[i16]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    i_rfactor: [u16; 3],
    cub: [u32; 3],
    cub_add: [i64; 3],
) -> [i64; 3] {
    let mut inner = [0i64; 3];
    for j in cols {
        let t = cm_s0_pixel(
            x_hvd,
            flt,
            centre,
            rows,
            (j - 1, j, j + 1),
            i_rfactor,
            cub,
            cub_add,
        );
        for b in 0..3 {
            inner[b] = inner[b].wrapping_add(t[b]);
        }
    }
    inner
}

/// One sample's three masked, cubed terms of [`cm_s0`] (before the row rounding): `rows` are the
/// offsets of the rows above, at and below, `cols` the columns left, at and right.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn cm_s0_pixel(
    x_hvd: [&[i16]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: (usize, usize, usize),
    i_rfactor: [u16; 3],
    cub: [u32; 3],
    cub_add: [i64; 3],
) -> [i64; 3] {
    const SUB: [u32; 3] = [10, 10, 12];
    const SQ_SHIFT: [u32; 3] = [29, 29, 30];
    const SQ_ADD: [i64; 3] = [1 << 28, 1 << 28, 1 << 29];
    let p = rows.1 + cols.1;
    let thr = neighbours8(flt, 1, rows, cols).wrapping_add(centre[p]);
    std::array::from_fn(|b| {
        let x = (x_hvd[b][p] as i32).wrapping_mul(i_rfactor[b] as i32);
        cm_term(x, thr, SUB[b], SQ_ADD[b], SQ_SHIFT[b], cub_add[b], cub[b])
    })
}

/// Integer part of the scale-1..3 numerator (libvmaf `i4_adm_cm`), the `i32` analogue of
/// [`cm_s0`]: `x = src * rfactor >> 28`, the threshold from [`csf_s123`](super::csf_s123)'s
/// sums, cube rounded by `shifts.0`, rows by `shifts.1`.
#[allow(clippy::too_many_arguments)]
pub fn cm_s123(
    x_hvd: [&[i32]; 3],
    flt: &[i32],
    centre: &[i32],
    stride: usize,
    w: usize,
    h: usize,
    rfactor: [u32; 3],
    shifts: (u32, u32),
) -> [i64; 3] {
    cm_s123_with(
        cm_s123_interior,
        x_hvd,
        flt,
        centre,
        stride,
        (w, h),
        CmRows::all(h),
        rfactor,
        shifts,
    )
}

/// [`cm_s123`] with the interior columns of each row computed by `interior` (a peer of
/// [`cm_s123_interior`], as a SIMD level's kernel table passes it); the edge columns and the row
/// rounding stay here.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn cm_s123_with(
    interior: impl Fn(
        [&[i32]; 3],
        &[i32],
        &[i32],
        (usize, usize, usize),
        Range<usize>,
        [u32; 3],
        u32,
    ) -> [i64; 3],
    x_hvd: [&[i32]; 3],
    flt: &[i32],
    centre: &[i32],
    stride: usize,
    (w, h): (usize, usize),
    window: CmRows,
    rfactor: [u32; 3],
    shifts: (u32, u32),
) -> [i64; 3] {
    let (shift_cub, shift_inner) = shifts;
    let cub_add = half_pow2_u32(shift_cub) as i64;
    let inner_add = half_pow2_u32(shift_inner) as i64;
    let inner_shift = shift_inner & 63;
    let reg = region_pool(w, h);
    let mut accum = [0i64; 3];
    // The visited columns: edge 0, the interior run, edge w - 1 (see `cm_span`).
    let first = (reg.left == 0).then_some(0);
    let mid = reg.left.max(1)..reg.right.min(w - 1);
    let last = (reg.right > w - 1).then_some(w - 1);
    for i in cm_span(reg.top, reg.bottom, h).filter(|i| window.rows.contains(i)) {
        let (up, down) = cm_neighbours(i, h);
        let b = window.base;
        let rows = ((up - b) * stride, (i - b) * stride, (down - b) * stride);
        let mut inner = interior(x_hvd, flt, centre, rows, mid.clone(), rfactor, shift_cub);
        for j in first.into_iter().chain(last) {
            let (l, r) = cm_neighbours(j, w);
            let t = cm_s123_pixel(
                x_hvd,
                flt,
                centre,
                rows,
                (l, j, r),
                rfactor,
                shift_cub,
                cub_add,
            );
            for b in 0..3 {
                inner[b] = inner[b].wrapping_add(t[b]);
            }
        }
        for b in 0..3 {
            accum[b] = accum[b].wrapping_add(inner[b].wrapping_add(inner_add) >> inner_shift);
        }
    }
    accum
}

/// Scalar interior-column kernel of [`cm_s123`] (`adm::CmS123Interior`): one row's sums over
/// the columns `cols`.
pub fn cm_s123_interior(
    x_hvd: [&[i32]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    rfactor: [u32; 3],
    shift_cub: u32,
) -> [i64; 3] {
    let cub_add = half_pow2_u32(shift_cub) as i64;
    let mut inner = [0i64; 3];
    for j in cols {
        let t = cm_s123_pixel(
            x_hvd,
            flt,
            centre,
            rows,
            (j - 1, j, j + 1),
            rfactor,
            shift_cub,
            cub_add,
        );
        for b in 0..3 {
            inner[b] = inner[b].wrapping_add(t[b]);
        }
    }
    inner
}

/// One sample's three masked, cubed terms of [`cm_s123`] (before the row rounding): `rows` are
/// the offsets of the rows above, at and below, `cols` the columns left, at and right.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn cm_s123_pixel(
    x_hvd: [&[i32]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: (usize, usize, usize),
    rfactor: [u32; 3],
    shift_cub: u32,
    cub_add: i64,
) -> [i64; 3] {
    let p = rows.1 + cols.1;
    let thr = neighbours8(flt, 1, rows, cols).wrapping_add(centre[p]);
    std::array::from_fn(|b| {
        let x = ((x_hvd[b][p] as i64)
            .wrapping_mul(rfactor[b] as i64)
            .wrapping_add(1 << 27)
            >> 28) as i32;
        cm_term(x, thr, 0, 1 << 29, 30, cub_add, shift_cub)
    })
}
