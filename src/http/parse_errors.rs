//! The contract's JSON body on the answers hyper gives by itself. A request hyper cannot parse
//! (a target over 64 KiB, header fields over its buffer, a malformed request line) never
//! reaches almanac: hyper answers it with a bare status line and closes the connection. This
//! wrapper of the connection's stream recognises such an answer as it is written — a status
//! line of one of those codes with no `content-type`, which every answer of almanac has — and
//! writes the contract's error response in its place.

use super::error::ApiError;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use warp::http::StatusCode;

pub(crate) struct ParseErrorBodies<S> {
    inner: S,
    /// The replacement response still to be written, and how much of it was.
    replacement: Option<(Vec<u8>, usize)>,
}

impl<S> ParseErrorBodies<S> {
    pub(crate) fn new(inner: S) -> ParseErrorBodies<S> {
        ParseErrorBodies {
            inner,
            replacement: None,
        }
    }
}

/// The contract's error for an automatic answer of hyper's, if `head` is one.
fn automatic_answer(head: &[u8]) -> Option<ApiError> {
    let status = head.strip_prefix(b"HTTP/1.1 ")?.get(..3)?;
    let error = match status {
        b"414" => ApiError::uri_too_long(),
        b"431" => ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "rest_header_fields_too_large",
            "The request's header fields are too large.",
        ),
        b"400" => ApiError::new(
            StatusCode::BAD_REQUEST,
            "rest_malformed_request",
            "The request is not well-formed HTTP/1.1.",
        ),
        _ => return None,
    };
    let lower = head.to_ascii_lowercase();
    let has_content_type = lower.windows(14).any(|w| w == b"\ncontent-type:");
    (!has_content_type).then_some(error)
}

fn response_bytes(error: &ApiError) -> Vec<u8> {
    let body = serde_json::to_vec(&error.body()).expect("JSON values always serialize");
    let mut out = format!(
        "HTTP/1.1 {}\r\ncontent-type: application/json; charset=UTF-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n",
        error.status,
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

impl<S: AsyncWrite + Unpin> ParseErrorBodies<S> {
    /// Writes what is left of the replacement; ready once all of it is written.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some((bytes, written)) = &mut self.replacement {
            while *written < bytes.len() {
                let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]))?;
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                *written += n;
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Starts replacing when `first` is hyper's automatic answer; the bytes hyper hands over
    /// from then on are taken as written and dropped.
    fn poll_intercept(
        &mut self,
        cx: &mut Context<'_>,
        first: &[u8],
        len: usize,
    ) -> Option<Poll<io::Result<usize>>> {
        if self.replacement.is_none() {
            let error = automatic_answer(first)?;
            self.replacement = Some((response_bytes(&error), 0));
        }
        Some(match self.poll_replacement(cx) {
            Poll::Ready(Ok(())) | Poll::Pending => Poll::Ready(Ok(len)),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
        })
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for ParseErrorBodies<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ParseErrorBodies<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if let Some(answer) = this.poll_intercept(cx, buf, buf.len()) {
            return answer;
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let first = bufs
            .iter()
            .find(|b| !b.is_empty())
            .map_or(&[][..], |b| &b[..]);
        let len = bufs.iter().map(|b| b.len()).sum();
        if let Some(answer) = this.poll_intercept(cx, first, len) {
            return answer;
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_bare_answers_are_replaced() {
        let bare = b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let error = automatic_answer(bare).expect("a bare 414");
        assert_eq!(error.status, StatusCode::URI_TOO_LONG);
        let replaced = String::from_utf8(response_bytes(&error)).unwrap();
        assert!(replaced.starts_with("HTTP/1.1 414 URI Too Long\r\n"));
        assert!(replaced.ends_with(r#""data":{"status":414,"max_bytes":8192}}"#));
        let ours = b"HTTP/1.1 414 URI Too Long\r\nContent-Type: application/json\r\n\r\n";
        assert!(automatic_answer(ours).is_none());
        assert!(automatic_answer(b"HTTP/1.1 200 OK\r\n\r\n").is_none());
        assert!(automatic_answer(b"{\"code\"").is_none());
    }
}
