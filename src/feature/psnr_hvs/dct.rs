//! Daala's integer 8-point forward DCT (lifting form), as libvmaf's `psnr_hvs` applies it: the
//! 2-D transform runs it down every column into a transposed scratch block, then down every column
//! of that. Integer arithmetic throughout (`i32`, wrapping as the C build does; it never overflows
//! for 12-bit input).

/// `round(v * c / 2^s)` the way each lifting step computes it: add half, shift arithmetically.
#[inline(always)]
fn lift(v: i32, c: i32, s: u32) -> i32 {
    v.wrapping_mul(c).wrapping_add(1 << (s - 1)) >> s
}

/// Halving that rounds towards zero (Daala's unbiased shift by one).
#[inline(always)]
fn half(a: i32) -> i32 {
    (((a as u32) >> 31) as i32).wrapping_add(a) >> 1
}

/// One 8-point transform of `x[0], x[stride], …` into `y[0..8]`.
fn fdct8(y: &mut [i32], x: &[i32], base: usize, stride: usize) {
    let at = |k: usize| x[base + k * stride];
    // Inputs in the transform's permuted order.
    let (mut t0, mut t4, mut t2, mut t6) = (at(0), at(1), at(2), at(3));
    let (mut t7, mut t3, mut t5, mut t1) = (at(4), at(5), at(6), at(7));
    // +1/-1 butterflies.
    t1 = t0.wrapping_sub(t1);
    let t1h = half(t1);
    t0 = t0.wrapping_sub(t1h);
    t4 = t4.wrapping_add(t5);
    let t4h = half(t4);
    t5 = t5.wrapping_sub(t4h);
    t3 = t2.wrapping_sub(t3);
    t2 = t2.wrapping_sub(half(t3));
    t6 = t6.wrapping_add(t7);
    let t6h = half(t6);
    t7 = t6h.wrapping_sub(t7);
    // Embedded 4-point type-II DCT.
    t0 = t0.wrapping_add(t6h);
    t6 = t0.wrapping_sub(t6);
    t2 = t4h.wrapping_sub(t2);
    t4 = t2.wrapping_sub(t4);
    // Its 2-point type-II DCT: tan(pi/8), sin(pi/4), tan(pi/8).
    t0 = t0.wrapping_sub(lift(t4, 13573, 15));
    t4 = t4.wrapping_add(lift(t0, 11585, 14));
    t0 = t0.wrapping_sub(lift(t4, 13573, 15));
    // Its 2-point type-IV DST (3pi/8 rotation).
    t6 = t6.wrapping_sub(lift(t2, 21895, 15));
    t2 = t2.wrapping_add(lift(t6, 15137, 14));
    t6 = t6.wrapping_sub(lift(t2, 21895, 15));
    // Embedded 4-point type-IV DST.
    t3 = t3.wrapping_add(lift(t5, 19195, 15));
    t5 = t5.wrapping_add(lift(t3, 11585, 14));
    t3 = t3.wrapping_sub(lift(t5, 7489, 13));
    t7 = half(t5).wrapping_sub(t7);
    t5 = t5.wrapping_sub(t7);
    t3 = t1h.wrapping_sub(t3);
    t1 = t1.wrapping_sub(t3);
    // pi/16 rotation.
    t7 = t7.wrapping_add(lift(t1, 3227, 15));
    t1 = t1.wrapping_sub(lift(t7, 6393, 15));
    t7 = t7.wrapping_add(lift(t1, 3227, 15));
    // 3pi/16 rotation.
    t5 = t5.wrapping_add(lift(t3, 2485, 13));
    t3 = t3.wrapping_sub(lift(t5, 18205, 15));
    t5 = t5.wrapping_add(lift(t3, 2485, 13));
    y[..8].copy_from_slice(&[t0, t1, t2, t3, t4, t5, t6, t7]);
}

/// The 2-D transform of a row-major 8x8 block, in place.
pub fn fdct8x8(block: &mut [i32; 64]) {
    let mut z = [0i32; 64];
    for i in 0..8 {
        fdct8(&mut z[8 * i..], block, i, 8);
    }
    for i in 0..8 {
        fdct8(&mut block[8 * i..], &z, i, 8);
    }
}
