use super::*;
use serde_json::json;

/// A hand-made model: two features, linear_rescale, RBF with two support vectors.
fn tiny(extra: &str) -> String {
    format!(
        r#"{{"param_dict": {{"C": 4.0}},
            "model_dict": {{
              "model_type": "LIBSVMNUSVR",
              "norm_type": "linear_rescale",
              "feature_names": ["VMAF_integer_feature_vif_scale0_score",
                                "VMAF_integer_feature_adm2_score"],
              "slopes": [0.02, 2.0, 0.5],
              "intercepts": [-1.0, -0.5, 0.25],
              "model": "svm_type nu_svr\nkernel_type rbf\ngamma 0.04\nnr_class 2\ntotal_sv 2\nrho -1.5\nSV\n4 1:0.5 2:0.25 \n-2.5 2:0.75 \n"
              {extra}
            }}}}"#
    )
}

/// The tiny model's prediction before transform and clip, computed by hand in libvmaf's order.
fn tiny_raw(f0: f64, f1: f64) -> f64 {
    let x0 = 2.0 * f0 + -0.5;
    let x1 = 0.5 * f1 + 0.25;
    let d0 = (x0 - 0.5) * (x0 - 0.5) + (x1 - 0.25) * (x1 - 0.25);
    let d1 = x0 * x0 + (x1 - 0.75) * (x1 - 0.75);
    let mut s = 0.0;
    s += 4.0 * (-0.04 * d0).exp();
    s += -2.5 * (-0.04 * d1).exp();
    s -= -1.5;
    (s - -1.0) / 0.02
}

#[test]
fn tiny_model_predicts_by_hand() {
    let m = Model::from_json_str(&tiny(""), "t").unwrap();
    assert_eq!(m.name(), "t");
    assert_eq!(m.model_type(), ModelType::SvmNuSvr);
    assert_eq!(m.features().len(), 2);
    assert!(m.features().iter().all(|f| f.opts.is_empty()));
    for (a, b) in [(0.3, 0.9), (1.0, 1.0), (0.0, 0.1)] {
        assert_eq!(m.predict(&[a, b]).to_bits(), tiny_raw(a, b).to_bits());
    }
}

#[test]
fn score_clip_and_disable_clip() {
    let m0 = Model::from_json_str(&tiny(""), "t").unwrap();
    let raw = tiny_raw(0.3, 0.9);
    let clip = format!(r#","score_clip": [{}, {}]"#, raw + 1.0, raw + 2.0);
    let mut m = Model::from_json_str(&tiny(&clip), "t").unwrap();
    assert_eq!(m0.predict(&[0.3, 0.9]), raw);
    assert_eq!(m.predict(&[0.3, 0.9]), raw + 1.0);
    m.set_flag("disable_clip", true).unwrap();
    assert_eq!(m.predict(&[0.3, 0.9]), raw);
    let clip = format!(r#","score_clip": [{}, {}]"#, raw - 2.0, raw - 1.0);
    let m = Model::from_json_str(&tiny(&clip), "t").unwrap();
    assert_eq!(m.predict(&[0.3, 0.9]), raw - 1.0);
    assert!(m.clone().set_flag("bogus", true).is_err());
}

#[test]
fn polynomial_transform_and_flags() {
    let t = r#","score_transform": {"p0": 1.5, "p1": 0.5, "p2": -0.001}"#;
    let mut m = Model::from_json_str(&tiny(t), "t").unwrap();
    let raw = tiny_raw(0.3, 0.9);
    // Not enabled in the model: no transform unless enable_transform.
    assert_eq!(m.predict(&[0.3, 0.9]), raw);
    m.set_flag("enable_transform", true).unwrap();
    let mut want = 0.0;
    want += 1.5;
    want += 0.5 * raw;
    want += -0.001 * raw * raw;
    assert_eq!(m.predict(&[0.3, 0.9]).to_bits(), want.to_bits());
    m.set_flag("disable_transform", true).unwrap();
    assert_eq!(m.predict(&[0.3, 0.9]), raw);

    // Enabled in the model; p1 = null disables that term.
    let t = r#","score_transform": {"enabled": true, "p0": 2.0, "p1": null, "p2": 0.5}"#;
    let m = Model::from_json_str(&tiny(t), "t").unwrap();
    assert_eq!(m.predict(&[0.3, 0.9]), 2.0 + 0.5 * raw * raw);
}

#[test]
fn rectification() {
    let raw = tiny_raw(0.3, 0.9);
    assert!(raw > 0.0);
    // p1 = 0.5 shrinks the score; out_gte_in restores the input.
    let t = r#","score_transform": {"enabled": true, "p1": 0.5, "out_gte_in": "true"}"#;
    let m = Model::from_json_str(&tiny(t), "t").unwrap();
    assert_eq!(m.predict(&[0.3, 0.9]), raw);
    let t = r#","score_transform": {"enabled": true, "p1": 0.5, "out_gte_in": "false"}"#;
    let m = Model::from_json_str(&tiny(t), "t").unwrap();
    assert_eq!(m.predict(&[0.3, 0.9]), 0.5 * raw);
    // p1 = 2 grows it; out_lte_in caps it at the input.
    let t = r#","score_transform": {"enabled": true, "p1": 2.0, "out_lte_in": "true"}"#;
    let m = Model::from_json_str(&tiny(t), "t").unwrap();
    assert_eq!(m.predict(&[0.3, 0.9]), raw);
}

#[test]
fn knots() {
    let k = [(0.0, 0.0), (50.0, 60.0), (100.0, 100.0)];
    // Inside segments.
    assert_eq!(piecewise_linear(25.0, &k), (60.0 / 50.0) * 25.0 + 0.0);
    let a = (100.0 - 60.0) / (100.0 - 50.0);
    assert_eq!(piecewise_linear(75.0, &k), a * 75.0 + (60.0 - 50.0 * a));
    // Extrapolation below the first and above the last knot.
    assert_eq!(piecewise_linear(-10.0, &k), (60.0 / 50.0) * -10.0);
    assert_eq!(piecewise_linear(110.0, &k), a * 110.0 + (60.0 - 50.0 * a));
    // Horizontal segments.
    let h = [(10.0, 5.0), (20.0, 5.0), (30.0, 7.0)];
    assert_eq!(piecewise_linear(0.0, &h), 5.0);
    assert_eq!(piecewise_linear(15.0, &h), 5.0);
    // Degenerate lists.
    assert_eq!(piecewise_linear(3.0, &[(1.0, 1.0)]), 3.0);
    assert_eq!(piecewise_linear(3.0, &[(1.0, 2.0), (0.5, 3.0)]), 0.0);

    let t = r#","score_transform": {"enabled": true, "knots": [[0.0, 0.0], [1000.0, 10.0]]}"#;
    let m = Model::from_json_str(&tiny(t), "t").unwrap();
    let raw = tiny_raw(0.3, 0.9);
    assert_eq!(
        m.predict(&[0.3, 0.9]),
        piecewise_linear(raw, &[(0.0, 0.0), (1000.0, 10.0)])
    );
}

#[test]
fn builtin_models() {
    assert_eq!(builtin_versions()[0], DEFAULT_MODEL_VERSION);
    assert_eq!(builtin_versions().len(), 15);
    let names = [
        "VMAF_integer_feature_adm2_score",
        "VMAF_integer_feature_motion2_score",
        "VMAF_integer_feature_vif_scale0_score",
        "VMAF_integer_feature_vif_scale1_score",
        "VMAF_integer_feature_vif_scale2_score",
        "VMAF_integer_feature_vif_scale3_score",
    ];
    for v in builtin_versions().iter().filter(|v| v.contains("v0.6")) {
        let m = Model::builtin(v).unwrap();
        assert_eq!(m.name(), "vmaf", "{v}");
        let got: Vec<_> = m.features().iter().map(|f| f.name.as_str()).collect();
        // The float models use the float twins of the same features.
        let want: Vec<String> = names
            .iter()
            .map(|n| {
                if v.contains("float") {
                    n.replace("integer_", "")
                } else {
                    n.to_string()
                }
            })
            .collect();
        assert_eq!(got, want, "{v}");
        let neg = v.ends_with("neg");
        for f in m.features() {
            let want = if !neg || f.name.contains("motion") {
                vec![]
            } else if f.name.contains("adm") {
                vec![("adm_enhn_gain_limit".to_string(), json!(1))]
            } else {
                vec![("vif_enhn_gain_limit".to_string(), json!(1))]
            };
            assert_eq!(f.opts, want, "{v} {}", f.name);
        }
    }
    // The 4K NEG model is the 4K model plus the NEG options.
    let mut k = Model::builtin("vmaf_4k_v0.6.1").unwrap();
    let kn = Model::builtin("vmaf_4k_v0.6.1neg").unwrap();
    assert_ne!(k, kn);
    k.features = kn.features.clone();
    assert_eq!(k, kn);
    // v0.6.1neg differs from v0.6.1 only in the options too.
    let mut a = Model::builtin("vmaf_v0.6.1").unwrap();
    let b = Model::builtin("vmaf_v0.6.1neg").unwrap();
    a.features = b.features.clone();
    assert_eq!(a, b);

    let e = Model::builtin("vmaf_v9").unwrap_err().to_string();
    assert!(
        e.contains("vmaf_v9") && e.contains("vmaf_4k_v0.6.1neg"),
        "{e}"
    );
}

#[test]
fn builtin_v1_models() {
    let v1: Vec<_> = builtin_versions()
        .iter()
        .filter(|v| v.starts_with("vmaf_v1.0.16_"))
        .collect();
    assert_eq!(v1.len(), 8);
    for v in v1 {
        let m = Model::builtin(v).unwrap();
        assert_eq!(m.name(), "vmaf", "{v}");
        let got: Vec<_> = m.features().iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            got,
            [
                "Cambi_feature_cambi_score",
                "Speed_chroma_feature_speed_chroma_uv_score",
                "VMAF_integer_feature_adm3_score",
                "VMAF_integer_feature_motion3_score"
            ],
            "{v}"
        );
        assert_eq!(m.chroma_correction, Some(120.0), "{v}");
        let motion = &m.features()[3].opts;
        let hfr = motion.iter().any(|(k, _)| k == "motion_moving_average");
        assert_eq!(hfr, v.contains("_hfr_"), "{v}: HFR motion options");
        let adm = &m.features()[2].opts;
        let rdh = adm
            .iter()
            .find(|(k, _)| k == "adm_ref_display_height")
            .unwrap();
        assert_eq!(
            rdh.1,
            json!(if v.ends_with("2160") { 2160 } else { 1080 }),
            "{v}"
        );
    }
}

#[test]
fn builtin_score_transform_is_off_by_default() {
    // vmaf_v0.6.1 carries a transform without "enabled": libvmaf applies it only with
    // enable_transform; the 4K model has none, so the flag changes nothing there.
    let f = [0.9, 3.0, 0.5, 0.8, 0.9, 0.95];
    let mut m = Model::builtin("vmaf_v0.6.1").unwrap();
    let plain = m.predict(&f);
    m.set_flag("enable_transform", true).unwrap();
    assert_ne!(m.predict(&f), plain);
    let mut k = Model::builtin("vmaf_4k_v0.6.1").unwrap();
    let plain = k.predict(&f);
    k.set_flag("enable_transform", true).unwrap();
    assert_eq!(k.predict(&f), plain);
}

/// Per-frame feature values and scores printed (`%.6f`) by the oracle, FFmpeg 9.0.2 + libvmaf
/// 86da14d, for testsrc2 320x240 against several distortions (noise + blur, heavy blur, heavy noise,
/// identical, contrast boost): (model, [adm2, motion2, vif0..3, score]). The NEG models' features
/// are the `_egl_1` variants. A second word is a model flag.
const ORACLE: &[(&str, [f64; 7])] = &[
    (
        "vmaf_v0.6.1",
        [
            0.845132, 0.000000, 0.377709, 0.810730, 0.906837, 0.957364, 58.678479,
        ],
    ),
    (
        "vmaf_v0.6.1neg",
        [
            0.844243, 0.000000, 0.377660, 0.804232, 0.900193, 0.949461, 57.688791,
        ],
    ),
    (
        "vmaf_4k_v0.6.1",
        [
            0.845132, 0.000000, 0.377709, 0.810730, 0.906837, 0.957364, 70.316142,
        ],
    ),
    (
        "vmaf_4k_v0.6.1neg",
        [
            0.844243, 0.000000, 0.377660, 0.804232, 0.900193, 0.949461, 69.618136,
        ],
    ),
    (
        "vmaf_v0.6.1 enable_transform",
        [
            0.845132, 0.000000, 0.377709, 0.810730, 0.906837, 0.957364, 78.726722,
        ],
    ),
    (
        "vmaf_v0.6.1 disable_clip",
        [
            0.845132, 0.000000, 0.377709, 0.810730, 0.906837, 0.957364, 58.678479,
        ],
    ),
    (
        "vmaf_v0.6.1",
        [
            0.544705, 1.935541, 0.252152, 0.462283, 0.590269, 0.750503, 0.000000,
        ],
    ),
    (
        "vmaf_v0.6.1neg",
        [
            0.543550, 1.935541, 0.252142, 0.453366, 0.569719, 0.717115, 0.000000,
        ],
    ),
    (
        "vmaf_4k_v0.6.1",
        [
            0.544705, 1.935541, 0.252152, 0.462283, 0.590269, 0.750503, 21.664619,
        ],
    ),
    (
        "vmaf_4k_v0.6.1neg",
        [
            0.543550, 1.935541, 0.252142, 0.453366, 0.569719, 0.717115, 20.433974,
        ],
    ),
    (
        "vmaf_v0.6.1",
        [
            0.878096, 1.984330, 0.205028, 0.566902, 0.698948, 0.793196, 52.765909,
        ],
    ),
    (
        "vmaf_v0.6.1neg",
        [
            0.860218, 1.984330, 0.201739, 0.555333, 0.686685, 0.779220, 48.503397,
        ],
    ),
    (
        "vmaf_4k_v0.6.1",
        [
            0.878096, 1.984330, 0.205028, 0.566902, 0.698948, 0.793196, 69.537714,
        ],
    ),
    (
        "vmaf_4k_v0.6.1neg",
        [
            0.860218, 1.984330, 0.201739, 0.555333, 0.686685, 0.779220, 66.203379,
        ],
    ),
    (
        "vmaf_v0.6.1",
        [
            1.000002, 1.935541, 1.000000, 1.000000, 0.999999, 0.999999, 100.000000,
        ],
    ),
    (
        "vmaf_v0.6.1neg",
        [
            0.999987, 1.935541, 1.000000, 1.000000, 0.999999, 0.999999, 100.000000,
        ],
    ),
    (
        "vmaf_4k_v0.6.1",
        [
            1.000002, 1.935541, 1.000000, 1.000000, 0.999999, 0.999999, 100.000000,
        ],
    ),
    (
        "vmaf_4k_v0.6.1neg",
        [
            0.999987, 1.935541, 1.000000, 1.000000, 0.999999, 0.999999, 100.000000,
        ],
    ),
    (
        "vmaf_v0.6.1 enable_transform",
        [
            1.000002, 1.935541, 1.000000, 1.000000, 0.999999, 0.999999, 100.000000,
        ],
    ),
    (
        "vmaf_v0.6.1 disable_clip",
        [
            1.000002, 1.935541, 1.000000, 1.000000, 0.999999, 0.999999, 100.098556,
        ],
    ),
    (
        "vmaf_v0.6.1",
        [
            1.242424, 1.834600, 1.083726, 1.099092, 1.103741, 1.106045, 100.000000,
        ],
    ),
    (
        "vmaf_v0.6.1neg",
        [
            0.924763, 1.834600, 0.998260, 0.998943, 0.998683, 0.998227, 83.418946,
        ],
    ),
    (
        "vmaf_4k_v0.6.1",
        [
            1.242424, 1.834600, 1.083726, 1.099092, 1.103741, 1.106045, 100.000000,
        ],
    ),
    (
        "vmaf_4k_v0.6.1neg",
        [
            0.924763, 1.834600, 0.998260, 0.998943, 0.998683, 0.998227, 88.340508,
        ],
    ),
    (
        "vmaf_v0.6.1 enable_transform",
        [
            1.242424, 1.834600, 1.083726, 1.099092, 1.103741, 1.106045, 100.000000,
        ],
    ),
    (
        "vmaf_v0.6.1 disable_clip",
        [
            1.242424, 1.834600, 1.083726, 1.099092, 1.103741, 1.106045, 167.064310,
        ],
    ),
];

/// Checks the scores within what the 6-decimal rounding of the inputs allows: the oracle's
/// features are within 5e-7 of the true ones, so a correct prediction is within
/// Σ |∂score/∂x_i| · 5e-7 (plus 5e-7 for the printed score) of the printed score.
#[test]
fn predicts_like_the_oracle() {
    for (spec, row) in ORACLE {
        let mut words = spec.split(' ');
        let mut m = Model::builtin(words.next().unwrap()).unwrap();
        for flag in words {
            m.set_flag(flag, true).unwrap();
        }
        let x = &row[..6];
        let got = m.predict(x);
        let mut bound = 5e-7;
        for j in 0..6 {
            let h = 1e-6;
            let (mut a, mut b) = (x.to_vec(), x.to_vec());
            a[j] += h;
            b[j] -= h;
            bound += ((m.predict(&a) - m.predict(&b)) / (2.0 * h)).abs() * 5e-7;
        }
        let diff = (got - row[6]).abs();
        assert!(
            diff <= bound * 1.05,
            "{spec}: {got} vs {} (diff {diff:e}, bound {bound:e})",
            row[6]
        );
    }
}

#[test]
fn file_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.json");
    let e = Model::from_path(&missing).unwrap_err().to_string();
    assert!(e.contains("nope.json"), "{e}");

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"model_dict\": [1, }").unwrap();
    let e = Model::from_path(&bad).unwrap_err().to_string();
    assert!(e.contains("bad JSON") && e.contains("line 1"), "{e}");

    let t = tiny("").replace("\"LIBSVMNUSVR\"", "\"RANDOMFOREST\"");
    let e = Model::from_json_str(&t, "t").unwrap_err().to_string();
    assert!(e.contains("unsupported model_type 'RANDOMFOREST'"), "{e}");

    let good = dir.path().join("good.json");
    std::fs::write(&good, tiny("")).unwrap();
    let m = Model::from_path(&good).unwrap();
    assert_eq!(m.name(), "vmaf");

    for (what, text) in [
        ("no model_dict", r#"{"param_dict": {}}"#.to_string()),
        ("not an object", "[1]".to_string()),
        ("bad norm", tiny("").replace("linear_rescale", "clip_0to1")),
        ("no svm", tiny("").replace("\"model\":", "\"xmodel\":")),
        (
            "bad svm",
            tiny("").replace("kernel_type rbf", "kernel_type fancy"),
        ),
        ("bad clip", tiny(r#","score_clip": [0]"#)),
        ("bad opts", tiny(r#","feature_opts_dicts": [{"a": [1]}]"#)),
        (
            "opts conflict",
            tiny(r#","feature_opts_dicts": [{"a": 1, "a": 2}]"#),
        ),
        ("bad transform", tiny(r#","score_transform": {"p0": "x"}"#)),
    ] {
        assert!(Model::from_json_str(&text, "t").is_err(), "{what}");
    }
    // Repeating a key with the same value is fine.
    assert!(
        Model::from_json_str(&tiny(r#","feature_opts_dicts": [{"a": 1, "a": 1.0}]"#), "t").is_ok()
    );
}

#[test]
fn feature_opts_are_normalised() {
    let t = tiny(
        r#","feature_opts_dicts": [{"vif_enhn_gain_limit": 1.0, "x": 0.1234567, "b": true,
                                     "s": "str"}, {}]"#,
    );
    let m = Model::from_json_str(&t, "t").unwrap();
    assert_eq!(
        m.features()[0].opts,
        vec![
            ("vif_enhn_gain_limit".to_string(), json!(1)),
            ("x".to_string(), json!(0.123457)),
            ("b".to_string(), json!(true)),
            ("s".to_string(), json!("str")),
        ]
    );
    assert!(m.features()[1].opts.is_empty());
}

#[test]
fn overloads() {
    let mut m = Model::builtin("vmaf_v0.6.1neg").unwrap();
    m.overload_feature("vif", "vif_enhn_gain_limit", "1.50")
        .unwrap();
    m.overload_feature("adm", "adm_csf_mode", "0").unwrap();
    m.overload_feature("nosuch", "x", "1").unwrap();
    for f in m.features() {
        if f.name.contains("vif") {
            assert_eq!(
                f.opts,
                vec![("vif_enhn_gain_limit".to_string(), json!(1.5))]
            );
        } else if f.name.contains("adm") {
            assert_eq!(
                f.opts,
                vec![
                    ("adm_enhn_gain_limit".to_string(), json!(1)),
                    ("adm_csf_mode".to_string(), json!(0))
                ]
            );
        } else {
            assert!(f.opts.is_empty());
        }
    }
    // Non-numeric values stay strings.
    m.overload_feature("motion", "motion_force_zero", "true")
        .unwrap();
    assert_eq!(
        m.features()[1].opts,
        vec![("motion_force_zero".to_string(), json!("true"))]
    );
}

#[test]
fn spec_load() {
    let specs = parse_model_option(
        "version=vmaf_v0.6.1:name=a:disable_clip=true:vif.vif_enhn_gain_limit=1.0|\
         version=vmaf_4k_v0.6.1neg",
    )
    .unwrap();
    let a = specs[0].load().unwrap();
    assert_eq!(a.name(), "a");
    assert!(a.disable_clip);
    assert_eq!(
        a.features()[2].opts,
        vec![("vif_enhn_gain_limit".to_string(), json!(1))]
    );
    let b = specs[1].load().unwrap();
    assert_eq!(b.name(), "vmaf");
    assert_eq!(b, Model::builtin("vmaf_4k_v0.6.1neg").unwrap());
    let e = parse_model_option("version=nope").unwrap()[0]
        .load()
        .unwrap_err();
    assert!(matches!(e, Error::Model(_)));
    let e = parse_model_option("path=/nonexistent/m.json").unwrap()[0]
        .load()
        .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/m.json"));
}

#[test]
fn bootstrap_statistics_by_libvmafs_formulas() {
    let c = super::collection::Bootstrap::builtin("vmaf_b_v0.6.3")
        .unwrap()
        .unwrap();
    assert_eq!(c.members().len(), 20);
    assert_eq!(c.head().name(), "vmaf");
    assert_eq!(c.members()[19].name(), "vmaf_0020");
    // Clip [0, 100], no transform: the statistics of 20 .. 1, the stddev scaled by the
    // transform's slope measured at mean ± 0.01 (1 up to rounding, as in libvmaf).
    let mut raw: Vec<f64> = (1..=20).rev().map(f64::from).collect();
    let s = super::collection::stats(&c.members()[0], &mut raw);
    let slope = ((10.5 + 0.01) - (10.5 - 0.01)) / (2.0 * 0.01);
    assert_eq!(s, [10.5, (399.0f64 / 12.0).sqrt() * slope, 1.475, 19.525]);
    // Near the clip the slope halves the stddev and the interval is clipped.
    let mut raw: Vec<f64> = (0..20).map(|i| 99.0 + f64::from(i) * 0.1).collect();
    let s = super::collection::stats(&c.members()[0], &mut raw);
    assert_eq!(s[0], 99.95);
    assert_eq!(s[3], 100.0);
    assert!(s[1] > 0.0 && s[1] < 0.6, "{s:?}");
    // A file that is a collection is refused by the single-model loader with the way out.
    let text = include_str!("builtin/vmaf_b_v0.6.3.json");
    let e = Model::from_json_str(text, "x").unwrap_err().to_string();
    assert!(e.contains("collection"), "{e}");
}
