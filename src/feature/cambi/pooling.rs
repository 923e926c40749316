//! CAMBI's pooling: per scale the mean of the top `topk` share of c-values (libvmaf's
//! `spatial_pooling`), then the scales weighted 16, 8, 4, 2, 1 and divided by the window's
//! pixel count (`weight_scores_per_scale`).
//!
//! The mean sums in `double` in array order after libvmaf's quickselect, so the selection
//! reproduces libvmaf's partitioning step for step: another selection would sum the same values
//! in another order.

use super::setup::NUM_SCALES;

/// Weight of each scale's score (libvmaf's `g_scale_weights`).
const SCALE_WEIGHTS: [i32; NUM_SCALES] = [16, 8, 4, 2, 1];

/// libvmaf's `quick_select`: reorders `a` so that its first `k` values are its `k` largest
/// (Hoare partitions around `a[k]`, narrowing to the side holding index `k`).
pub fn quick_select(a: &mut [f32], k: usize) {
    let n = a.len();
    if n == k {
        return;
    }
    let (mut left, mut right) = (0isize, n as isize - 1);
    let k = k as isize;
    while left < right {
        let pivot = a[k as usize];
        let (mut i, mut j) = (left, right);
        loop {
            while a[i as usize] > pivot {
                i += 1;
            }
            while a[j as usize] < pivot {
                j -= 1;
            }
            if i <= j {
                a.swap(i as usize, j as usize);
                i += 1;
                j -= 1;
            }
            if i > j {
                break;
            }
        }
        if j < k {
            left = i;
        }
        if k < i {
            right = j;
        }
    }
}

/// The mean of the largest `topk` share of `c` (at least one value), reordering `c`.
pub fn spatial_pooling(c: &mut [f32], topk: f64) -> f64 {
    let n = c.len() as i32;
    let k = ((topk * n as f64) as i32).clamp(1, n) as usize;
    quick_select(c, k);
    let mut sum = 0.0f64;
    for &v in &c[..k] {
        sum += v as f64;
    }
    sum / k as f64
}

/// The scales' scores combined, for a `window`-wide window.
pub fn weight_scores(scores: &[f64; NUM_SCALES], window: u16) -> f64 {
    let odd = 2 * (window >> 1) + 1;
    let pixels = (odd as u32 * odd as u32) as u16;
    let mut score = 0.0f64;
    for (s, w) in scores.iter().zip(SCALE_WEIGHTS) {
        score += s * w as f64;
    }
    score / pixels as f64
}
