//! UniFFI's binding generator at the version this crate builds with:
//! `uniffi-bindgen generate --library libporfiry_ffi.so --language
//! python|kotlin|swift --out-dir DIR`.

fn main() {
    uniffi::uniffi_bindgen_main()
}
