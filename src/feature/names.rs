//! libvmaf's feature-name aliases: the long names models use and the short names logs print.

/// (full name, log alias) pairs, as libvmaf's alias table defines them.
static ALIASES: &[(&str, &str)] = &[
    ("Cambi_feature_cambi_score", "cambi"),
    ("VMAF_feature_adm2_score", "adm2"),
    ("VMAF_feature_adm3_score", "adm3"),
    ("VMAF_feature_adm_scale0_score", "adm_scale0"),
    ("VMAF_feature_adm_scale1_score", "adm_scale1"),
    ("VMAF_feature_adm_scale2_score", "adm_scale2"),
    ("VMAF_feature_adm_scale3_score", "adm_scale3"),
    ("VMAF_feature_aim_score", "aim"),
    ("VMAF_feature_motion2_score", "motion2"),
    ("VMAF_feature_motion3_score", "motion3"),
    ("VMAF_feature_motion_score", "motion"),
    (
        "Speed_chroma_feature_speed_chroma_u_score",
        "speed_chroma_u",
    ),
    (
        "Speed_chroma_feature_speed_chroma_v_score",
        "speed_chroma_v",
    ),
    (
        "Speed_chroma_feature_speed_chroma_uv_score",
        "speed_chroma_uv",
    ),
    (
        "Speed_temporal_feature_speed_temporal_score",
        "speed_temporal",
    ),
    ("VMAF_feature_vif_scale0_score", "vif_scale0"),
    ("VMAF_feature_vif_scale1_score", "vif_scale1"),
    ("VMAF_feature_vif_scale2_score", "vif_scale2"),
    ("VMAF_feature_vif_scale3_score", "vif_scale3"),
    ("VMAF_integer_feature_adm2_score", "integer_adm2"),
    ("VMAF_integer_feature_aim_score", "integer_aim"),
    ("VMAF_integer_feature_adm3_score", "integer_adm3"),
    (
        "VMAF_integer_feature_adm_scale0_score",
        "integer_adm_scale0",
    ),
    (
        "VMAF_integer_feature_adm_scale1_score",
        "integer_adm_scale1",
    ),
    (
        "VMAF_integer_feature_adm_scale2_score",
        "integer_adm_scale2",
    ),
    (
        "VMAF_integer_feature_adm_scale3_score",
        "integer_adm_scale3",
    ),
    ("VMAF_integer_feature_motion_score", "integer_motion"),
    ("VMAF_integer_feature_motion2_score", "integer_motion2"),
    ("VMAF_integer_feature_motion3_score", "integer_motion3"),
    (
        "VMAF_integer_feature_vif_scale0_score",
        "integer_vif_scale0",
    ),
    (
        "VMAF_integer_feature_vif_scale1_score",
        "integer_vif_scale1",
    ),
    (
        "VMAF_integer_feature_vif_scale2_score",
        "integer_vif_scale2",
    ),
    (
        "VMAF_integer_feature_vif_scale3_score",
        "integer_vif_scale3",
    ),
];

/// The short alias of a full feature name (the name itself if it has none).
pub fn alias(full: &str) -> &str {
    ALIASES
        .iter()
        .find(|(f, _)| *f == full)
        .map(|(_, a)| *a)
        .unwrap_or(full)
}

/// The full name of a short alias (the name itself if it is not an alias).
pub fn full_name(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(_, a)| *a == name)
        .map(|(f, _)| *f)
        .unwrap_or(name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip() {
        for (f, a) in super::ALIASES {
            assert_eq!(super::alias(f), *a);
            assert_eq!(super::full_name(a), *f);
        }
        assert_eq!(super::alias("unknown"), "unknown");
    }
}
