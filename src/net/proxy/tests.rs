//! The proxy's request reading, forwarding and relay, on real sockets.

use super::*;

fn head(text: &str) -> Head {
    parse_head(text.as_bytes()).unwrap()
}

#[test]
fn plain_requests_go_on_in_origin_form_to_the_host_they_name() {
    let t = target_of(&head(
        "GET http://Docs.Test:8080/a?b=1 HTTP/1.1\r\nHost: docs.test:8080\r\nProxy-Connection: keep-alive\r\nAccept: */*",
    ))
    .unwrap();
    assert_eq!(t.host, Host::Name("docs.test".into()));
    assert_eq!(t.port, 8080);
    let fwd = String::from_utf8(t.forward.unwrap().0).unwrap();
    assert!(fwd.starts_with("GET /a?b=1 HTTP/1.1\r\n"), "{fwd}");
    assert!(!fwd.contains("Proxy-"), "{fwd}");
    assert!(fwd.ends_with("Connection: close\r\n\r\n"), "{fwd}");
}

#[test]
fn tricks_are_refused_or_decided_on_the_real_host() {
    // A Host header naming another host than the URL.
    assert!(target_of(&head("GET http://ok.test/ HTTP/1.1\r\nHost: evil.test")).is_err());
    // User information before the host.
    assert!(target_of(&head("GET http://ok.test@evil.test/ HTTP/1.1")).is_err());
    // Encoded and numeric hosts are what they decode to.
    let t = target_of(&head("CONNECT %65vil.test:443 HTTP/1.1")).unwrap();
    assert_eq!(t.host, Host::Name("evil.test".into()));
    let t = target_of(&head("CONNECT 2130706433:443 HTTP/1.1")).unwrap();
    assert_eq!(t.host, Host::Addr("127.0.0.1".parse().unwrap()));
    // Origin-form requests are not proxy requests.
    assert!(target_of(&head("GET / HTTP/1.1\r\nHost: x")).is_err());
    assert!(target_of(&head("CONNECT ok.test HTTP/1.1")).is_err());
}

#[test]
fn hop_by_hop_headers_are_dropped_and_one_host_is_sent() {
    let fwd =
        |text: &str| String::from_utf8(target_of(&head(text)).unwrap().forward.unwrap().0).unwrap();
    let f = fwd(
        "GET http://ok.test:8080/ HTTP/1.1\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nAccept: */*",
    );
    assert_eq!(
        f,
        "GET / HTTP/1.1\r\nAccept: */*\r\nHost: ok.test:8080\r\nConnection: close\r\n\r\n"
    );
    let f = fwd("GET http://ok.test/ HTTP/1.1\r\nHost: ok.test\r\nAccept: */*");
    assert_eq!(
        f,
        "GET / HTTP/1.1\r\nHost: ok.test\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    );
}

/// Two connected streams: the test's end and the proxy's.
async fn pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let ours = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    (ours, listener.accept().await.unwrap().0)
}

/// A tunnel: the relay sends what followed the head and everything
/// after, both ways, and counts both.
#[tokio::test]
async fn a_tunnel_is_relayed_both_ways_and_counted() {
    let (mut client, client_side) = pair().await;
    let (mut upstream, upstream_side) = pair().await;
    let relayed = tokio::spawn(relay(client_side, upstream_side, None, b"tls".to_vec()));
    let mut ok = [0u8; 39];
    client.read_exact(&mut ok).await.unwrap();
    assert_eq!(&ok, b"HTTP/1.1 200 Connection established\r\n\r\n");
    client.write_all(b"more").await.unwrap();
    client.shutdown().await.unwrap();
    let mut up = Vec::new();
    upstream.read_to_end(&mut up).await.unwrap();
    assert_eq!(up, b"tlsmore");
    upstream.write_all(b"reply!").await.unwrap();
    upstream.shutdown().await.unwrap();
    let mut down = Vec::new();
    client.read_to_end(&mut down).await.unwrap();
    assert_eq!(down, b"reply!");
    assert_eq!(relayed.await.unwrap(), (7, 6));
}

/// A plain request: its head and its body (by length, or chunk by chunk)
/// go up, and nothing after them: a second request pipelined behind it
/// (another `Host`, for a server behind a shared address) is never sent
/// on. The response comes down and the connection closes.
#[tokio::test]
async fn one_plain_request_goes_up_and_nothing_pipelined_behind_it() {
    let second = b"GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n".to_vec();
    let chunked = b"4\r\nwiki\r\n5;x=y\r\npedia\r\n0\r\nT: v\r\n\r\n".to_vec();
    for (body, sent_body, with_rest) in [
        (Body::None, Vec::new(), true),
        (Body::Length(5), b"hello".to_vec(), true),
        (Body::Length(5), b"hello".to_vec(), false),
        (Body::Chunked, chunked.clone(), true),
        (Body::Chunked, chunked.clone(), false),
    ] {
        let (mut client, client_side) = pair().await;
        let (mut upstream, upstream_side) = pair().await;
        // The body and the pipelined request arrive with the head (`rest`)
        // or after it.
        let all = [sent_body.as_slice(), &second].concat();
        let (rest, later) = if with_rest {
            (all.clone(), Vec::new())
        } else {
            (Vec::new(), all.clone())
        };
        let relayed = tokio::spawn(relay(
            client_side,
            upstream_side,
            Some((b"HEAD".to_vec(), body)),
            rest,
        ));
        client.write_all(&later).await.unwrap();
        let mut up = Vec::new();
        upstream.read_to_end(&mut up).await.unwrap();
        assert_eq!(up, [b"HEAD".as_slice(), &sent_body].concat(), "{body:?}");
        upstream.write_all(b"reply!").await.unwrap();
        upstream.shutdown().await.unwrap();
        let mut down = Vec::new();
        client.read_to_end(&mut down).await.unwrap();
        assert_eq!(down, b"reply!");
        let (sent, received) = relayed.await.unwrap();
        assert_eq!(sent, 4 + sent_body.len() as u64);
        assert_eq!(received, 6);
    }
}

#[test]
fn a_body_framed_two_ways_is_refused() {
    let body = |extra: &str| {
        target_of(&head(&format!(
            "POST http://ok.test/ HTTP/1.1\r\nHost: ok.test{extra}"
        )))
        .map(|t| t.forward.unwrap().1)
    };
    assert_eq!(body("").unwrap(), Body::None);
    assert_eq!(body("\r\nContent-Length: 12").unwrap(), Body::Length(12));
    assert_eq!(
        body("\r\nContent-Length: 12\r\nContent-Length: 12").unwrap(),
        Body::Length(12)
    );
    assert_eq!(
        body("\r\nTransfer-Encoding: gzip, chunked").unwrap(),
        Body::Chunked
    );
    for bad in [
        "\r\nContent-Length: 12\r\nTransfer-Encoding: chunked",
        "\r\nContent-Length: 12\r\nContent-Length: 13",
        "\r\nContent-Length: -1",
        "\r\nTransfer-Encoding: chunked, gzip",
        "\r\nHost: evil.test",
    ] {
        assert!(body(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_request_line_has_three_parts_and_an_http_1_version() {
    assert!(parse_head(b"GET http://ok.test/ HTTP/1.1").is_some());
    assert!(parse_head(b"GET http://ok.test/ HTTP/1.1 more").is_none());
    assert!(parse_head(b"GET http://ok.test/ HTTP/2").is_none());
    assert!(parse_head(b"GET http://ok.test/").is_none());
}

/// A head is read across several reads up to `MAX_HEAD`, and refused
/// past it.
#[tokio::test]
async fn heads_are_read_in_pieces_up_to_the_bound() {
    async fn read_sent(pieces: Vec<Vec<u8>>) -> Option<(Vec<u8>, Vec<u8>)> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let writer = tokio::spawn(async move {
            let mut c = TcpStream::connect(addr).await.unwrap();
            // The reader may stop early (past the bound).
            for p in pieces {
                let _ = c.write_all(&p).await;
                let _ = c.flush().await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            c
        });
        let (mut s, _) = listener.accept().await.unwrap();
        let got = read_head(&mut s).await;
        drop(writer.await.unwrap());
        got
    }
    let line = b"GET http://ok.test/ HTTP/1.1\r\n".to_vec();
    let pad = format!("X-Pad: {}\r\n", "a".repeat(8 * 1024)).into_bytes();
    let (head, rest) = read_sent(vec![line.clone(), pad.clone(), b"\r\nbody".to_vec()])
        .await
        .expect("an 8 KiB head in three pieces");
    assert_eq!(head.len(), line.len() + pad.len() + 2);
    assert_eq!(rest, b"body");
    let big = format!("X-Pad: {}\r\n", "a".repeat(MAX_HEAD)).into_bytes();
    assert!(read_sent(vec![line, big, b"\r\n".to_vec()]).await.is_none());
}

/// Dropping the proxy stops it: its port takes no more connections.
#[tokio::test]
async fn a_dropped_proxy_stops_listening() {
    let log = Arc::new(NetLog::new(Instant::now()));
    let policy = Arc::new(PolicySet::new(Vec::new()));
    let proxy = Proxy::start(policy, Resolver::default(), log, (None, None))
        .await
        .unwrap();
    let port = proxy.port();
    assert!(TcpStream::connect(("127.0.0.1", port)).await.is_ok());
    drop(proxy);
    for _ in 0..200 {
        if TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("port {port} still takes connections 2 s after the proxy was dropped");
}
