//! Token sequences into training windows (pure): each window holds
//! `n_ctx + 1` tokens (the inputs and, shifted by one, the labels) and
//! marks which labels are a reply's. Texts are laid end to end; a text that
//! does not fit what is left of a window starts a new one (the rest
//! padded), so an example is never cut where it could be whole. A text
//! longer than a window keeps its last `n_ctx + 1` tokens: the reply is at
//! an example's end, and the windows before it would teach only the prompt
//! (a core tick's is 2,000 tokens).

/// One example's tokens: the prompt, then from `reply_start` on the reply
/// the model is taught to give (and the template's end of the answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    /// The whole example.
    pub tokens: Vec<i32>,
    /// Where the reply starts (`tokens.len()`: no reply).
    pub reply_start: usize,
}

/// One training window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// `n_ctx + 1` tokens: inputs `[..n_ctx]`, labels `[1..]`.
    pub tokens: Vec<i32>,
    /// Per label (`n_ctx` of them): whether it is a reply's token, the part
    /// a reply-only loss teaches.
    pub reply: Vec<bool>,
}

/// Windows of `n_ctx + 1` tokens from `texts`, padded with `pad`.
pub fn pack(texts: &[Text], n_ctx: u32, pad: i32) -> Vec<Window> {
    let size = n_ctx as usize + 1;
    let mut windows = Vec::new();
    // Per token of the window being filled: is it a reply's?
    let mut current: Vec<(i32, bool)> = Vec::with_capacity(size);
    let close = |current: &mut Vec<(i32, bool)>, windows: &mut Vec<Window>| {
        current.resize(size, (pad, false));
        let tokens = current.iter().map(|&(t, _)| t).collect();
        let reply = current[1..].iter().map(|&(_, r)| r).collect();
        windows.push(Window { tokens, reply });
        current.clear();
    };
    for text in texts.iter().filter(|t| !t.tokens.is_empty()) {
        let cut = text.tokens.len().saturating_sub(size);
        let kept = text.tokens[cut..]
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, cut + i >= text.reply_start));
        if current.len() + text.tokens.len() - cut > size {
            close(&mut current, &mut windows);
        }
        current.extend(kept);
    }
    if !current.is_empty() {
        close(&mut current, &mut windows);
    }
    windows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(tokens: &[i32], reply_start: usize) -> Text {
        Text {
            tokens: tokens.to_vec(),
            reply_start,
        }
    }

    fn tokens(windows: &[Window]) -> Vec<Vec<i32>> {
        windows.iter().map(|w| w.tokens.clone()).collect()
    }

    #[test]
    fn texts_fill_windows_end_to_end_and_start_anew_rather_than_split() {
        let texts = vec![
            text(&[1, 2], 2),
            text(&[3, 4, 5], 3),
            text(&[6, 7, 8, 9], 4),
        ];
        // Windows of 5 (n_ctx 4): [1 2 3 4 5] then [6 7 8 9 pad].
        assert_eq!(
            tokens(&pack(&texts, 4, 0)),
            vec![vec![1, 2, 3, 4, 5], vec![6, 7, 8, 9, 0]]
        );
        // [1 2] + [3 4 5] = 5 fits a window of 5; with n_ctx 3 it does not.
        assert_eq!(
            tokens(&pack(&texts, 3, -1)),
            vec![vec![1, 2, -1, -1], vec![3, 4, 5, -1], vec![6, 7, 8, 9]]
        );
    }

    #[test]
    fn a_long_text_keeps_its_tail_where_the_reply_is() {
        let long: Vec<i32> = (1..=11).collect();
        let windows = pack(&[text(&[100], 1), text(&long, 9), text(&[200], 1)], 4, 0);
        assert_eq!(
            tokens(&windows),
            vec![
                vec![100, 0, 0, 0, 0],
                vec![7, 8, 9, 10, 11],
                vec![200, 0, 0, 0, 0]
            ]
        );
        assert!(pack(&[], 4, 0).is_empty());
        assert!(pack(&[text(&[], 0)], 4, 0).is_empty());
    }

    #[test]
    fn the_labels_of_a_reply_are_marked_and_nothing_else() {
        // Prompt [1 2 3], reply [4 5]; prompt [6], reply [7]; then padding.
        let windows = pack(&[text(&[1, 2, 3, 4, 5], 3), text(&[6, 7], 1)], 8, 0);
        assert_eq!(windows.len(), 1);
        assert_eq!(windows[0].tokens, vec![1, 2, 3, 4, 5, 6, 7, 0, 0]);
        // Label j is token j + 1: 4 and 5 (labels 2, 3) and 7 (label 5).
        assert_eq!(
            windows[0].reply,
            vec![false, false, true, true, false, true, false, false]
        );
        // A cut text keeps its marks where its tokens went.
        let long: Vec<i32> = (1..=11).collect();
        let cut = pack(&[text(&long, 9)], 4, 0);
        assert_eq!(cut[0].tokens, vec![7, 8, 9, 10, 11]);
        assert_eq!(cut[0].reply, vec![false, false, true, true]);
    }
}
