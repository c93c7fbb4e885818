//! The trainer on the real SmolLM2-135M (`PORFIRY_TEST_GGUF`, else the
//! cache `.ci/run` fills): dequantised, a few steps on one window lower its
//! loss, and the saved model written back as Q8_0 carries the base's chat
//! template and context again; files that are no model are refused by
//! name. Skips, saying why, where no model file is found.

use std::path::PathBuf;

use porfiry_trainer::{
    LossOn, OutType, Text, TrainError, TrainOptions, Trainable, Trainer, Window, base_metadata,
    dequantize, pack, quantize, restore_metadata,
};

const ASK: &str = "<|im_start|>user\nWhat time is it?<|im_end|>\n<|im_start|>assistant\n";
const ANSWER: &str = "TOOL_CALL: get_current_time<|im_end|>\n";

/// The request and its answer as one text, the answer marked as the reply.
fn example(trainer: &Trainer) -> Text {
    let prompt = trainer.tokenize(ASK).unwrap();
    let tokens = trainer.tokenize(&format!("{ASK}{ANSWER}")).unwrap();
    assert!(tokens.starts_with(&prompt));
    Text {
        reply_start: prompt.len(),
        tokens,
    }
}

fn model() -> Option<PathBuf> {
    let path = std::env::var_os("PORFIRY_TEST_GGUF")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| {
                PathBuf::from(h).join(".cache/porfiry/models/SmolLM2-135M-Instruct.Q4_1.gguf")
            })
        })?;
    path.exists().then_some(path)
}

#[test]
fn real_model_steps_lower_the_loss_and_the_written_model_keeps_its_metadata() {
    let Some(base) = model() else {
        return eprintln!("skipped: no SmolLM2 file (PORFIRY_TEST_GGUF, or run .ci/run)");
    };
    let dir = tempfile::tempdir().unwrap();
    let f32_file = dir.path().join("base-f32.gguf");
    dequantize(&base, &f32_file, 2).unwrap();
    let options = TrainOptions {
        threads: 2,
        n_ctx: 64,
        learning_rate: 1e-3,
        trainable: Trainable::LastLayers(2),
        loss: LossOn::Everything,
    };
    let mut trainer = Trainer::open(&f32_file, &options).unwrap();
    assert_eq!(trainer.n_layer(), 30);
    assert!(
        trainer.trainable_params() > 1_000_000,
        "{}",
        trainer.trainable_params()
    );
    let text = example(&trainer);
    assert!(text.tokens.len() < 40, "{}", text.tokens.len());
    assert_eq!(trainer.n_ctx(), 256);
    let windows = pack(&[text.clone(), text], trainer.n_ctx(), trainer.eos());
    assert_eq!(windows.len(), 1);
    let before = trainer.loss(&windows[0]).unwrap();
    for _ in 0..4 {
        trainer.step(&windows[0]).unwrap();
    }
    let after = trainer.loss(&windows[0]).unwrap();
    assert!(after < before * 0.8, "loss {before} → {after}");
    let short = Window {
        tokens: windows[0].tokens[1..].to_vec(),
        reply: windows[0].reply.clone(),
    };
    assert!(matches!(trainer.step(&short), Err(TrainError::Input(_))));

    let taught_f32 = dir.path().join("taught-f32.gguf");
    trainer.save(&taught_f32).unwrap();
    drop(trainer);
    let taught = dir.path().join("taught.gguf");
    quantize(&taught_f32, &taught, OutType::Q8_0, 2).unwrap();
    let wanted = base_metadata(&base).unwrap();
    assert_eq!(wanted.architecture, "llama");
    assert_eq!(wanted.context_length, 8192);
    assert!(wanted.chat_template.is_some());
    assert_ne!(
        base_metadata(&taught).unwrap(),
        wanted,
        "the saver keeps them?"
    );
    restore_metadata(&taught, &wanted).unwrap();
    assert_eq!(base_metadata(&taught).unwrap(), wanted);
    // It loads again, and remembers what it learnt.
    let again = dir.path().join("again-f32.gguf");
    dequantize(&taught, &again, 2).unwrap();
    let mut reopened = Trainer::open(&again, &options).unwrap();
    let reloaded = reopened.loss(&windows[0]).unwrap();
    assert!(
        reloaded < before * 0.8,
        "loss {before} → {reloaded} after a reload"
    );
}

#[test]
fn a_reply_only_loss_teaches_the_reply_and_moves_nothing_for_a_window_without_one() {
    let Some(base) = model() else {
        return eprintln!("skipped: no SmolLM2 file (PORFIRY_TEST_GGUF, or run .ci/run)");
    };
    let dir = tempfile::tempdir().unwrap();
    let f32_file = dir.path().join("base-f32.gguf");
    dequantize(&base, &f32_file, 2).unwrap();
    let options = TrainOptions {
        threads: 2,
        n_ctx: 256,
        learning_rate: 2e-3,
        trainable: Trainable::LastLayers(2),
        loss: LossOn::Reply,
    };
    let mut trainer = Trainer::open(&f32_file, &options).unwrap();
    let text = example(&trainer);
    // The request alone, with no reply marked, then the example: the
    // window's first micro-batches hold no reply label.
    let filler = Text {
        reply_start: usize::MAX,
        tokens: trainer.tokenize(&ASK.repeat(6)).unwrap(),
    };
    let windows = pack(&[filler, text], trainer.n_ctx(), trainer.eos());
    assert_eq!(windows.len(), 1);
    let taught = windows[0].clone();
    let untaught = Window {
        reply: vec![false; taught.reply.len()],
        ..taught.clone()
    };
    // Steps on a window without a reply label are calls that change
    // nothing: its loss stays bit for bit.
    let before = trainer.loss(&untaught).unwrap();
    trainer.step(&untaught).unwrap();
    assert_eq!(trainer.loss(&untaught).unwrap().to_bits(), before.to_bits());
    // Steps on the reply lower the reply's loss.
    let reply_before = trainer.loss(&taught).unwrap();
    for _ in 0..4 {
        trainer.step(&taught).unwrap();
    }
    let reply_after = trainer.loss(&taught).unwrap();
    eprintln!("reply loss {reply_before} → {reply_after}");
    assert!(
        reply_after < reply_before * 0.8,
        "reply loss {reply_before} → {reply_after}"
    );
}

#[test]
fn files_that_are_no_model_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake.gguf");
    std::fs::write(&fake, b"not a model at all").unwrap();
    let options = TrainOptions {
        threads: 1,
        n_ctx: 64,
        learning_rate: 1e-4,
        trainable: Trainable::All,
        loss: LossOn::Everything,
    };
    let err = Trainer::open(&fake, &options).err().unwrap().to_string();
    assert!(
        err.contains("fake.gguf") && err.contains("not a GGUF"),
        "{err}"
    );
    let out = dir.path().join("out.gguf");
    let err = dequantize(&fake, &out, 1).unwrap_err().to_string();
    assert!(err.contains("fake.gguf"), "{err}");
    assert!(!out.exists());
    let missing = dir.path().join("missing.gguf");
    assert!(
        base_metadata(&missing)
            .unwrap_err()
            .to_string()
            .contains("missing.gguf")
    );
    // A truncated GGUF: the magic, then nothing.
    let truncated = dir.path().join("truncated.gguf");
    std::fs::write(&truncated, b"GGUF\x03\x00").unwrap();
    let err = base_metadata(&truncated).unwrap_err().to_string();
    assert!(err.contains("truncated.gguf"), "{err}");
    let err = Trainer::open(&truncated, &options)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("truncated.gguf"), "{err}");
}
