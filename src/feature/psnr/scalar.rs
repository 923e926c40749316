//! The scalar specification of PSNR's one kernel: the sum of squared differences of a plane
//! pair, in libvmaf's integer arithmetic.
#![forbid(unsafe_code)]

/// Sum of squared differences of the `w`x`h` planes `r` and `d` (strides `rs` and `ds`, in
/// samples): per row in `u64` (every term fits 32 bits), rows added wrapping as libvmaf's `u64`
/// accumulator.
pub fn sse<T: Copy + Into<u32>>(r: &[T], rs: usize, d: &[T], ds: usize, w: usize, h: usize) -> u64 {
    let mut total = 0u64;
    for y in 0..h {
        let (rr, dr) = (&r[y * rs..y * rs + w], &d[y * ds..y * ds + w]);
        total = total.wrapping_add(row(rr, dr));
    }
    total
}

/// Sum of squared differences of two rows (also the SIMD kernels' tail).
pub fn row<T: Copy + Into<u32>>(r: &[T], d: &[T]) -> u64 {
    r.iter()
        .zip(d)
        .map(|(&a, &b)| {
            let e = a.into().abs_diff(b.into()) as u64;
            e * e
        })
        .sum()
}
