//! Targets over the mesh's decoders (compiled from their files, see the
//! crate doc): the offload stream's frames (`porfiry-offload`) and the
//! invitation code (`porfiry-mesh`). The
//! async frame reader runs on an in-memory cursor
//! (`futures::executor::block_on`), as its own tests drive it.

use futures::executor::block_on;
use futures::io::Cursor;

use crate::invite::code::InviteCode;
use crate::offload::wire::{
    ClientFrame, MAX_OFFLOAD_FRAME_BYTES, MAX_OFFLOAD_REQUEST_BYTES, ServerFrame, read_frame,
};

/// `offload::wire::read_frame`: the first byte picks the side (even: what a
/// server reads from a client, odd: what a client reads from a server), the
/// rest is the stream, read frame after frame until it ends or fails.
pub fn offload_frame(data: &[u8]) {
    let Some((&side, stream)) = data.split_first() else {
        return;
    };
    let mut stream = Cursor::new(stream);
    block_on(async {
        if side % 2 == 0 {
            while let Ok(Some(_)) =
                read_frame::<_, ClientFrame>(&mut stream, MAX_OFFLOAD_REQUEST_BYTES).await
            {
            }
        } else {
            while let Ok(Some(_)) =
                read_frame::<_, ServerFrame>(&mut stream, MAX_OFFLOAD_FRAME_BYTES).await
            {
            }
        }
    });
}

/// `InviteCode::decode` on the bytes as text: a decoded code re-encodes to
/// a code that decodes to itself. (The invitation stream's reader,
/// `invite::wire`, reads a fixed 17 bytes: nothing there to fuzz.)
pub fn invite(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(code) = InviteCode::decode(&text) {
        let again = code.encode().expect("a decoded code re-encodes");
        assert_eq!(InviteCode::decode(&again).as_ref(), Ok(&code));
    }
}
