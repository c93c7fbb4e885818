//! Token sequences into training windows (pure): each window holds
//! `n_ctx + 1` tokens (the inputs and, shifted by one, the labels). Texts
//! are laid end to end; a text that does not fit what is left of a window
//! starts a new one (the rest padded), so an example is never cut where it
//! could be whole. A text longer than a window keeps its last `n_ctx + 1`
//! tokens: the reply is at an example's end, and the windows before it
//! would teach only the prompt (a core tick's is 2,000 tokens).

/// Windows of `n_ctx + 1` tokens from `texts`, padded with `pad`.
pub fn pack(texts: &[Vec<i32>], n_ctx: u32, pad: i32) -> Vec<Vec<i32>> {
    let size = n_ctx as usize + 1;
    let mut windows = Vec::new();
    let mut current: Vec<i32> = Vec::with_capacity(size);
    for text in texts.iter().filter(|t| !t.is_empty()) {
        let text = &text[text.len().saturating_sub(size)..];
        if current.len() + text.len() > size {
            current.resize(size, pad);
            windows.push(std::mem::replace(&mut current, Vec::with_capacity(size)));
        }
        current.extend_from_slice(text);
    }
    if !current.is_empty() {
        current.resize(size, pad);
        windows.push(current);
    }
    windows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_fill_windows_end_to_end_and_start_anew_rather_than_split() {
        let texts = vec![vec![1, 2], vec![3, 4, 5], vec![6, 7, 8, 9]];
        // Windows of 5 (n_ctx 4): [1 2 3 4 5] then [6 7 8 9 pad].
        assert_eq!(
            pack(&texts, 4, 0),
            vec![vec![1, 2, 3, 4, 5], vec![6, 7, 8, 9, 0]]
        );
        // [1 2] + [3 4 5] = 5 fits a window of 5; with n_ctx 3 it does not.
        assert_eq!(
            pack(&texts, 3, -1),
            vec![vec![1, 2, -1, -1], vec![3, 4, 5, -1], vec![6, 7, 8, 9]]
        );
    }

    #[test]
    fn a_long_text_keeps_its_tail_where_the_reply_is() {
        let long: Vec<i32> = (1..=11).collect();
        let windows = pack(&[vec![100], long, vec![200]], 4, 0);
        assert_eq!(
            windows,
            vec![
                vec![100, 0, 0, 0, 0],
                vec![7, 8, 9, 10, 11],
                vec![200, 0, 0, 0, 0]
            ]
        );
        assert!(pack(&[], 4, 0).is_empty());
        assert!(pack(&[vec![]], 4, 0).is_empty());
    }
}
