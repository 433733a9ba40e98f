//! The request parser on arbitrary bytes (RESP2 multibulk, inline lines, RESP3 frames such as
//! attributes, which are not requests): it never panics or loops, a request fed in any
//! chunking parses exactly as when it arrives at once (the parser resumes), every parsed
//! multibulk request survives a round trip through the encoder, and the limits hold.
#![no_main]

use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use resplock::protocol::{
    encode, parse_request, Limits, ParseState, ProtocolError, PROTO_INLINE_MAX_SIZE,
    UNAUTH_MAX_BULK,
};
use resplock::Reply;

type Outcome = (Vec<Vec<Bytes>>, Option<ProtocolError>);

/// Feed `input` `step` bytes at a time (never past what a big argument still needs, as the
/// connection reads), parsing after each piece.
fn run(input: &[u8], step: usize, limits: &Limits) -> Outcome {
    let mut buf = BytesMut::new();
    let mut st = ParseState::default();
    let mut out = Vec::new();
    let mut fed = 0;
    loop {
        let mut n = step.min(input.len() - fed);
        if let Some(missing) = st.big_arg_missing(&buf) {
            n = n.min(missing.max(1));
        }
        buf.extend_from_slice(&input[fed..fed + n]);
        fed += n;
        // Each request consumes at least one byte: more iterations than bytes is a loop.
        for _ in 0..=input.len() + 1 {
            match parse_request(&mut buf, &mut st, limits) {
                Ok(None) => break,
                Ok(Some(args)) => {
                    let cap = if limits.unauthenticated {
                        UNAUTH_MAX_BULK.min(limits.max_bulk_len)
                    } else {
                        limits.max_bulk_len
                    };
                    // Inline arguments are bounded by the inline limit instead.
                    let cap = cap.max(PROTO_INLINE_MAX_SIZE as i64);
                    assert!(args.iter().all(|a| a.len() as i64 <= cap));
                    out.push(args)
                }
                Err(e) => {
                    assert!(
                        !e.0.contains(&b'\r') && !e.0.contains(&b'\n'),
                        "CR/LF in {e:?}"
                    );
                    return (out, Some(e));
                }
            }
        }
        if fed == input.len() {
            return (out, None);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (ctl, input) = data.split_at(2);
    let limits = Limits {
        max_bulk_len: if ctl[0] & 1 == 0 {
            512 * 1024 * 1024
        } else {
            i64::from(ctl[0] >> 2) * 8
        },
        unauthenticated: ctl[0] & 2 != 0,
    };
    let step = usize::from(ctl[1] % 19) + 1;
    let whole = run(input, input.len().max(1), &limits);
    if input.len() < PROTO_INLINE_MAX_SIZE {
        let chunked = run(input, step, &limits);
        assert_eq!(whole, chunked, "chunking changed the outcome (step {step})");
    }
    // A parsed request, encoded as a multibulk, parses back to itself.
    for args in &whole.0 {
        if args.is_empty() {
            continue;
        }
        let mut enc = BytesMut::new();
        encode(
            &Reply::Array(args.iter().cloned().map(Reply::Bulk).collect()),
            2,
            &mut enc,
        );
        let mut st = ParseState::default();
        let back = parse_request(
            &mut enc,
            &mut st,
            &Limits {
                max_bulk_len: i64::MAX,
                unauthenticated: false,
            },
        )
        .expect("re-encoded request parses")
        .expect("complete");
        assert_eq!(&back, args);
        assert!(enc.is_empty());
    }
});
