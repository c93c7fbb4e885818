//! Fuzz target: any bytes given to the item decoder (single and batch, and
//! as stored payload + signature parts) must return an error or a verified
//! item, never panic, and an accepted item must re-encode to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use porfiry_protocol::{VerifiedItem, verify_batch};

fuzz_target!(|data: &[u8]| {
    if let Ok(item) = VerifiedItem::decode(data, 0) {
        assert_eq!(item.envelope_bytes(), data);
        assert_eq!(item.id(), porfiry_protocol::ItemId::of_envelope(data));
    }
    let _ = verify_batch(&[data, data], 0);
    if data.len() >= 64 {
        let (sig, payload) = data.split_at(64);
        let _ = VerifiedItem::from_parts(payload, sig, 0);
    }
});
