//! The libsvm part of a model: the text format libvmaf embeds in its JSON models (`"model"`), and
//! regression prediction computed exactly as libsvm's `svm_predict` (same kernel arithmetic, same
//! summation order), so that scores match libvmaf bit for bit.

use std::fmt;

/// libsvm's `svm_type`s that predict a value (`svm_predict_values`' first branch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SvmType {
    OneClass,
    EpsilonSvr,
    NuSvr,
}

/// libsvm's kernels (all but `precomputed`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kernel {
    Linear,
    Poly { degree: i32, gamma: f64, coef0: f64 },
    Rbf { gamma: f64 },
    Sigmoid { gamma: f64, coef0: f64 },
}

/// One sparse vector: (index, value) pairs, in file order.
pub(crate) type Sparse = Vec<(i32, f64)>;

/// A parsed libsvm regression model.
#[derive(Clone, PartialEq)]
pub(crate) struct Svm {
    pub svm_type: SvmType,
    pub kernel: Kernel,
    pub rho: f64,
    /// One coefficient per support vector (`sv_coef[0]`).
    pub coef: Vec<f64>,
    pub sv: Vec<Sparse>,
}

impl fmt::Debug for Svm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Svm")
            .field("svm_type", &self.svm_type)
            .field("kernel", &self.kernel)
            .field("rho", &self.rho)
            .field("total_sv", &self.sv.len())
            .finish()
    }
}

/// A cursor over the model text with the reading primitives libvmaf's C++ parser uses.
struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

impl<'a> Cursor<'a> {
    /// The next token delimited by a single ' ' or '\n' (libvmaf's `read_next`); `None` at an
    /// empty token or at the end of the text.
    fn read_next(&mut self) -> Option<&'a str> {
        let start = self.pos;
        while let Some(&c) = self.s.get(self.pos) {
            self.pos += 1;
            if c == b' ' || c == b'\n' {
                let tok = &self.s[start..self.pos - 1];
                return if tok.is_empty() {
                    None
                } else {
                    std::str::from_utf8(tok).ok()
                };
            }
        }
        None
    }

    /// The rest of the current line (`std::getline`); `None` at the end of the text.
    fn read_line(&mut self) -> Option<&'a str> {
        if self.pos >= self.s.len() {
            return None;
        }
        let start = self.pos;
        let end = self.s[start..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.s.len(), |i| start + i);
        self.pos = if end < self.s.len() { end + 1 } else { end };
        std::str::from_utf8(&self.s[start..end]).ok()
    }

    fn skip_ws(&mut self) {
        while self.s.get(self.pos).is_some_and(|&c| is_space(c)) {
            self.pos += 1;
        }
    }

    fn digits(&mut self) -> usize {
        let s = self.pos;
        while self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        self.pos - s
    }

    /// `stream >> int`.
    fn int(&mut self) -> Option<i64> {
        self.skip_ws();
        let start = self.pos;
        if matches!(self.s.get(self.pos), Some(b'+' | b'-')) {
            self.pos += 1;
        }
        if self.digits() == 0 {
            self.pos = start;
            return None;
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .ok()?
            .parse()
            .ok()
    }

    /// `stream >> double` (decimal notation; converted with correct rounding, as strtod).
    fn double(&mut self) -> Option<f64> {
        self.skip_ws();
        let start = self.pos;
        if matches!(self.s.get(self.pos), Some(b'+' | b'-')) {
            self.pos += 1;
        }
        let mut n = self.digits();
        if self.s.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            n += self.digits();
        }
        if n == 0 {
            self.pos = start;
            return None;
        }
        if matches!(self.s.get(self.pos), Some(b'e' | b'E')) {
            let mark = self.pos;
            self.pos += 1;
            if matches!(self.s.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                self.pos = mark;
            }
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .ok()?
            .parse()
            .ok()
    }

    /// `stream.ignore(1)`.
    fn ignore1(&mut self) {
        if self.pos < self.s.len() {
            self.pos += 1;
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }
}

fn err(msg: impl Into<String>) -> String {
    msg.into()
}

/// Parses libsvm's model text as libvmaf's `svm_parse_model_from_buffer` does. Errors are plain
/// messages (the caller adds context).
pub(crate) fn parse(text: &str) -> Result<Svm, String> {
    let mut c = Cursor {
        s: text.as_bytes(),
        pos: 0,
    };
    let mut svm_type = None;
    let mut kernel_name = None;
    let (mut degree, mut gamma, mut coef0) = (0i64, 0f64, 0f64);
    let mut nr_class: i64 = 0;
    let mut total_sv: Option<i64> = None;
    let mut perms: i64 = 0;
    let mut rho: Vec<f64> = Vec::new();

    let array = |c: &mut Cursor<'_>, n: i64, what: &str| -> Result<Vec<f64>, String> {
        (0..n.max(0))
            .map(|_| {
                let v = c
                    .double()
                    .ok_or_else(|| err(format!("failed to read {what}")))?;
                c.ignore1();
                Ok(v)
            })
            .collect()
    };
    let int_value = |c: &mut Cursor<'_>, what: &str| -> Result<i64, String> {
        let v = c
            .int()
            .ok_or_else(|| err(format!("failed to read {what}")))?;
        c.ignore1();
        Ok(v)
    };

    while let Some(tok) = c.read_next() {
        match tok {
            "SV" => break,
            "svm_type" => {
                let v = c.read_next().ok_or("failed to read svm_type")?;
                svm_type = Some(match v {
                    "nu_svr" => SvmType::NuSvr,
                    "epsilon_svr" => SvmType::EpsilonSvr,
                    "one_class" => SvmType::OneClass,
                    "c_svc" | "nu_svc" => {
                        return Err(format!(
                            "svm_type {v} (classification) is not supported; VMAF models are \
                             regressions (nu_svr)"
                        ))
                    }
                    _ => return Err(format!("unknown svm_type '{v}'")),
                });
            }
            "kernel_type" => {
                let v = c.read_next().ok_or("failed to read kernel_type")?;
                match v {
                    "linear" | "polynomial" | "rbf" | "sigmoid" => kernel_name = Some(v),
                    "precomputed" => return Err("kernel_type precomputed is not supported".into()),
                    _ => return Err(format!("unknown kernel_type '{v}'")),
                }
            }
            "degree" => degree = int_value(&mut c, "degree")?,
            "gamma" => gamma = array(&mut c, 1, "gamma")?[0],
            "coef0" => coef0 = array(&mut c, 1, "coef0")?[0],
            "nr_class" => {
                nr_class = int_value(&mut c, "nr_class")?;
                // libsvm reads a C int; beyond that nr_class * (nr_class - 1) overflows.
                if !(0..=i64::from(i32::MAX)).contains(&nr_class) {
                    return Err(format!("nr_class {nr_class} is out of range"));
                }
                perms = nr_class * (nr_class - 1) / 2;
            }
            "total_sv" => total_sv = Some(int_value(&mut c, "total_sv")?),
            "rho" => rho = array(&mut c, perms, "rho")?,
            "label" | "nr_sv" => {
                for _ in 0..nr_class.max(0) {
                    int_value(&mut c, tok)?;
                }
            }
            "probA" | "probB" => {
                array(&mut c, perms, tok)?;
            }
            _ => return Err(format!("unknown text '{tok}' in the libsvm model")),
        }
    }

    let svm_type = svm_type.ok_or("the libsvm model has no svm_type")?;
    // libsvm's default (a zeroed svm_parameter) is the linear kernel.
    let kernel = match kernel_name.unwrap_or("linear") {
        "linear" => Kernel::Linear,
        "polynomial" => Kernel::Poly {
            degree: i32::try_from(degree).map_err(|_| "degree out of range")?,
            gamma,
            coef0,
        },
        "rbf" => Kernel::Rbf { gamma },
        _ => Kernel::Sigmoid { gamma, coef0 },
    };
    if nr_class != 2 {
        return Err(format!(
            "nr_class is {nr_class}; a libsvm regression model has nr_class 2"
        ));
    }
    let rho = *rho.first().ok_or("the libsvm model has no rho")?;
    let l = total_sv.ok_or("the libsvm model has no total_sv")?;
    let l = usize::try_from(l).map_err(|_| "total_sv is negative")?;

    // Each support vector takes a line of at least two bytes: a count read from the file never
    // reserves more than the rest of the file can hold (a total_sv of 2e9 must not allocate).
    let cap = l.min(c.s.len().saturating_sub(c.pos) / 2);
    let mut coef = Vec::with_capacity(cap);
    let mut sv = Vec::with_capacity(cap);
    for i in 0..l {
        let line = c
            .read_line()
            .ok_or_else(|| format!("failed to read support vector {} of {l}", i + 1))?;
        let mut lc = Cursor {
            s: line.as_bytes(),
            pos: 0,
        };
        coef.push(lc.double().ok_or_else(|| {
            format!(
                "failed to parse the coefficient of support vector {}",
                i + 1
            )
        })?);
        let mut nodes = Vec::new();
        // while (line.good() && line >> index) { line.ignore(1, ':'); line >> value; }
        while !lc.at_end() {
            let Some(index) = lc.int() else { break };
            lc.ignore1();
            let value = lc
                .double()
                .ok_or_else(|| format!("failed to read support vector {}", i + 1))?;
            let index = i32::try_from(index).map_err(|_| "support vector index out of range")?;
            nodes.push((index, value));
        }
        sv.push(nodes);
    }
    Ok(Svm {
        svm_type,
        kernel,
        rho,
        coef,
        sv,
    })
}

/// libsvm's `Kernel::dot`.
fn dot(x: &[(i32, f64)], y: &[(i32, f64)]) -> f64 {
    let (mut i, mut j, mut sum) = (0, 0, 0.0);
    while i < x.len() && j < y.len() {
        if x[i].0 == y[j].0 {
            sum += x[i].1 * y[j].1;
            i += 1;
            j += 1;
        } else if x[i].0 > y[j].0 {
            j += 1;
        } else {
            i += 1;
        }
    }
    sum
}

/// libsvm's `powi`.
fn powi(base: f64, times: i32) -> f64 {
    let (mut tmp, mut ret) = (base, 1.0);
    let mut t = times;
    while t > 0 {
        if t % 2 == 1 {
            ret *= tmp;
        }
        tmp *= tmp;
        t /= 2;
    }
    ret
}

impl Svm {
    /// libsvm's `Kernel::k_function(x, sv)`.
    fn k(&self, x: &[(i32, f64)], y: &[(i32, f64)]) -> f64 {
        match self.kernel {
            Kernel::Linear => dot(x, y),
            Kernel::Poly {
                degree,
                gamma,
                coef0,
            } => powi(gamma * dot(x, y) + coef0, degree),
            Kernel::Sigmoid { gamma, coef0 } => (gamma * dot(x, y) + coef0).tanh(),
            Kernel::Rbf { gamma } => {
                let (mut i, mut j, mut sum) = (0, 0, 0.0);
                while i < x.len() && j < y.len() {
                    if x[i].0 == y[j].0 {
                        let d = x[i].1 - y[j].1;
                        sum += d * d;
                        i += 1;
                        j += 1;
                    } else if x[i].0 > y[j].0 {
                        sum += y[j].1 * y[j].1;
                        j += 1;
                    } else {
                        sum += x[i].1 * x[i].1;
                        i += 1;
                    }
                }
                while i < x.len() {
                    sum += x[i].1 * x[i].1;
                    i += 1;
                }
                while j < y.len() {
                    sum += y[j].1 * y[j].1;
                    j += 1;
                }
                (-gamma * sum).exp()
            }
        }
    }

    /// libsvm's `svm_predict` for a regression / one-class model.
    pub(crate) fn predict(&self, x: &[(i32, f64)]) -> f64 {
        let mut sum = 0.0;
        for (c, sv) in self.coef.iter().zip(&self.sv) {
            sum += c * self.k(x, sv);
        }
        sum -= self.rho;
        match self.svm_type {
            SvmType::OneClass => {
                if sum > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            }
            SvmType::EpsilonSvr | SvmType::NuSvr => sum,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = "svm_type nu_svr\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 3\n\
                        rho -0.25\nSV\n1.5 1:0.1 2:0.2 \n-2 1:0.3 3:0.4 \n0.75 2:1 \n";

    #[test]
    fn parses_tiny_model() {
        let m = parse(TINY).unwrap();
        assert_eq!(m.svm_type, SvmType::NuSvr);
        assert_eq!(m.kernel, Kernel::Rbf { gamma: 0.5 });
        assert_eq!(m.rho, -0.25);
        assert_eq!(m.coef, vec![1.5, -2.0, 0.75]);
        assert_eq!(m.sv[1], vec![(1, 0.3), (3, 0.4)]);
        assert_eq!(m.sv[2], vec![(2, 1.0)]);
    }

    #[test]
    fn rbf_prediction_by_hand() {
        let m = parse(TINY).unwrap();
        let x = [(1, 0.5), (2, 0.25), (3, -0.5)];
        // Squared distances in libsvm's merge order.
        let d0 = (0.5f64 - 0.1) * (0.5 - 0.1) + (0.25 - 0.2) * (0.25 - 0.2) + 0.25;
        let d1 = (0.5f64 - 0.3) * (0.5 - 0.3) + 0.25 * 0.25 + (-0.5 - 0.4) * (-0.5 - 0.4);
        let d2 = 0.5f64 * 0.5 + (0.25 - 1.0) * (0.25 - 1.0) + 0.25;
        let mut want = 0.0;
        want += 1.5 * (-0.5 * d0).exp();
        want += -2.0 * (-0.5 * d1).exp();
        want += 0.75 * (-0.5 * d2).exp();
        want -= -0.25;
        assert_eq!(m.predict(&x).to_bits(), want.to_bits());
    }

    #[test]
    fn other_kernels() {
        let lin = parse("svm_type epsilon_svr\nkernel_type linear\nnr_class 2\ntotal_sv 1\nrho 1\nSV\n2 1:3 2:4\n").unwrap();
        assert_eq!(lin.predict(&[(1, 1.0), (2, 0.5)]), 2.0 * (3.0 + 2.0) - 1.0);
        let poly = parse("svm_type nu_svr\nkernel_type polynomial\ndegree 3\ngamma 0.5\ncoef0 1\nnr_class 2\ntotal_sv 1\nrho 0\nSV\n1 1:2\n").unwrap();
        assert_eq!(poly.predict(&[(1, 1.0)]), (0.5f64 * 2.0 + 1.0).powi(3));
        assert_eq!(powi(1.5, 5), 1.5 * 1.5 * 1.5 * 1.5 * 1.5);
    }

    #[test]
    fn rejects_bad_models() {
        assert!(parse("svm_type c_svc\nkernel_type rbf\nSV\n").is_err());
        assert!(parse("svm_type nu_svr\nkernel_type foo\nSV\n").is_err());
        assert!(parse("svm_type nu_svr\nbogus 1\nSV\n").is_err());
        // Fewer support vectors than announced.
        assert!(parse(
            "svm_type nu_svr\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv 2\nrho 0\nSV\n1 1:1\n"
        )
        .is_err());
        // A malformed node.
        assert!(parse(
            "svm_type nu_svr\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv 1\nrho 0\nSV\n1 1:x\n"
        )
        .is_err());
    }

    /// Issue 8: a huge announced count used to reserve memory for it (2e9 support vectors: 48 GB,
    /// an allocation failure that aborted the host process; i64::MAX: a capacity-overflow panic).
    /// Now it is an ordinary error: too few support vectors.
    #[test]
    fn huge_total_sv_is_an_error_not_an_allocation() {
        for n in ["2000000000", "9223372036854775807"] {
            let m = format!(
                "svm_type nu_svr\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv {n}\nrho 0\nSV\n1 1:1\n"
            );
            let e = parse(&m).unwrap_err();
            assert!(e.contains("failed to read support vector 2 of"), "{e}");
        }
    }

    /// Found by fuzzing (model_json): a huge nr_class overflowed nr_class * (nr_class - 1).
    #[test]
    fn huge_nr_class_is_an_error_not_an_overflow() {
        for n in ["3037000500", "9223372036854775807", "-5"] {
            let m = format!(
                "svm_type nu_svr\nkernel_type rbf\ngamma 1\nnr_class {n}\ntotal_sv 1\nrho 0\nSV\n1 1:1\n"
            );
            let e = parse(&m).unwrap_err();
            assert!(e.contains("nr_class") && e.contains("out of range"), "{e}");
        }
    }
}
