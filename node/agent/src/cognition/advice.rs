//! Advice for the person running the core, said once when the core starts
//! (`porfiry think`) and under `porfiry llm list`: the seed (§6) recommends
//! at least two independent validators, and with none or one the cognitive
//! validation is weak (auto_pass, or one model's word — its own, when the
//! only validator is the main model).

/// Validators the seed recommends at least (§6: "Рекомендуется
/// использовать минимум 2 независимых валидатора").
pub const RECOMMENDED_VALIDATORS: usize = 2;

/// The warning for a registry with `validators` (their names) and the main
/// model `main`, or `None` with two or more validators.
pub fn validator_advice(validators: &[&str], main: Option<&str>) -> Option<String> {
    let why = match validators {
        [] => "no validators: every reply passes unvalidated (auto_pass)".to_owned(),
        [only] if Some(*only) == main => {
            format!("one validator, {only}, the main model itself: self-validation")
        }
        [only] => format!("one validator, {only}"),
        _ => return None,
    };
    Some(format!(
        "warning: {why}; the seed recommends at least {RECOMMENDED_VALIDATORS} validators \
         (porfiry llm add NAME --url URL --model M --validator)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_or_one_validator_is_warned_about_two_are_not() {
        let none = validator_advice(&[], Some("main")).unwrap();
        assert!(
            none.contains("no validators") && none.contains("auto_pass"),
            "{none}"
        );
        assert!(
            none.contains("the seed recommends at least 2 validators"),
            "{none}"
        );
        let own = validator_advice(&["main"], Some("main")).unwrap();
        assert!(own.contains("self-validation"), "{own}");
        let one = validator_advice(&["judge"], Some("main")).unwrap();
        assert!(
            one.contains("one validator, judge") && !one.contains("self"),
            "{one}"
        );
        assert_eq!(validator_advice(&["a", "b"], Some("main")), None);
    }
}
