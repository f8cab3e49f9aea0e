//! Object store servers for the tests: found next to `$TFREC_TEST_PYTHON` or on `PATH`, started
//! on a free loopback port and killed when dropped.

use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::text;

pub const BUCKET: &str = "tfrec-test";

/// `name` next to `$TFREC_TEST_PYTHON`, else on `PATH`; `None` (after saying why) when absent
/// outside CI, a failure in CI.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let beside_python = std::env::var_os("TFREC_TEST_PYTHON")
        .map(PathBuf::from)
        .and_then(|p| p.parent().map(|d| d.join(name)));
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name));
    let found = beside_python.into_iter().chain(on_path).find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{name} is not installed next to $TFREC_TEST_PYTHON nor on PATH (python/requirements-test.txt installs it)"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: {name} is not installed next to $TFREC_TEST_PYTHON nor on PATH"
        );
    }
    found
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A server process, killed when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Server {
    pub fn start(program: &Path, args: &[&str], port: u16) -> Server {
        let child = Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
        let server = Server { child, port };
        // Up once it accepts connections; it has a minute.
        for _ in 0..600 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("{} did not listen on port {port}", program.display());
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A moto S3 server with a bucket, and the Python (with boto3) that came with it.
pub struct S3 {
    pub server: Server,
    python: PathBuf,
}

impl S3 {
    pub fn start() -> Option<S3> {
        let moto = find_tool("moto_server")?;
        let python = moto.with_file_name("python");
        let port = free_port();
        let server = Server::start(&moto, &["-H", "127.0.0.1", "-p", &port.to_string()], port);
        let s3 = S3 { server, python };
        s3.boto("s3.create_bucket(Bucket=BUCKET)", &[]);
        Some(s3)
    }

    /// The environment a client of this server runs with.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ENDPOINT_URL", self.server.endpoint()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }

    /// Runs Python `code` with `s3` a boto3 client of the server, `BUCKET` and `ARGS` set.
    pub fn boto(&self, code: &str, args: &[&str]) -> String {
        let script = format!(
            "import sys, boto3\nBUCKET = {BUCKET:?}\nARGS = sys.argv[1:]\n\
             s3 = boto3.client('s3', endpoint_url={:?}, aws_access_key_id='testing', \
             aws_secret_access_key='testing', region_name='us-east-1')\n{code}\n",
            self.server.endpoint()
        );
        let out = Command::new(&self.python)
            .args(["-c", &script])
            .args(args)
            .output()
            .expect("run python");
        assert!(out.status.success(), "boto3: {}", text(&out.stderr));
        text(&out.stdout)
    }

    /// Uploads the local file `path` as `key`.
    pub fn upload(&self, path: &Path, key: &str) {
        self.boto("s3.upload_file(ARGS[0], BUCKET, ARGS[1])", &[super::s(path), key]);
    }

    /// The keys in the bucket, sorted.
    pub fn keys(&self) -> Vec<String> {
        let listed = self.boto(
            "for o in s3.list_objects_v2(Bucket=BUCKET).get('Contents', []): print(o['Key'])",
            &[],
        );
        let mut keys: Vec<String> = listed.lines().map(str::to_owned).collect();
        keys.sort();
        keys
    }

    /// Whether a multipart upload is still open in the bucket.
    pub fn open_uploads(&self) -> usize {
        let n = self.boto(
            "print(len(s3.list_multipart_uploads(Bucket=BUCKET).get('Uploads', [])))",
            &[],
        );
        n.trim().parse().expect("a count")
    }
}
