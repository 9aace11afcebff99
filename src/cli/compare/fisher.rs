//! Fisher's exact test of a 2×2 table: how likely pass counts this far
//! apart are when both sides pass equally often. Exact, for the small
//! counts of repeated runs (a two-proportion z-test misleads below a few
//! dozen runs).

/// ln(k!) for k in 0..=n.
fn log_factorials(n: u32) -> Vec<f64> {
    let mut out = vec![0.0; n as usize + 1];
    for k in 1..=n as usize {
        out[k] = out[k - 1] + (k as f64).ln();
    }
    out
}

/// The two-sided p-value of the table `[[a, b], [c, d]]` (rows: the two
/// sides; columns: passed, failed): the probability, with the margins
/// fixed, of every table at most as likely as this one.
pub fn two_sided(a: u32, b: u32, c: u32, d: u32) -> f64 {
    let n = a + b + c + d;
    if n == 0 {
        return 1.0;
    }
    let (row, col) = (a + b, a + c);
    let lf = log_factorials(n);
    let f = |k: u32| lf[k as usize];
    let p = |x: u32| {
        (f(row) + f(n - row) + f(col) + f(n - col)
            - f(n)
            - f(x)
            - f(row - x)
            - f(col - x)
            - f(n + x - row - col))
        .exp()
    };
    let observed = p(a);
    let low = (row + col).saturating_sub(n);
    let high = row.min(col);
    (low..=high)
        .map(p)
        .filter(|&q| q <= observed * (1.0 + 1e-7))
        .sum::<f64>()
        .min(1.0)
}

#[cfg(test)]
mod tests {
    use super::two_sided;

    #[test]
    fn known_values() {
        // 8/8 against 2/8: apart; 8/8 against 7/8: not.
        assert!(
            (two_sided(8, 0, 2, 6) - 0.006_993).abs() < 1e-5,
            "{}",
            two_sided(8, 0, 2, 6)
        );
        assert!((two_sided(8, 0, 7, 1) - 1.0).abs() < 1e-9);
        // R: fisher.test(matrix(c(3,1,1,3),2))$p.value = 0.4857
        assert!((two_sided(3, 1, 1, 3) - 0.485_714).abs() < 1e-5);
        assert_eq!(two_sided(0, 0, 0, 0), 1.0);
        assert!((two_sided(1, 0, 0, 1) - 1.0).abs() < 1e-9);
    }
}
