//! The progress display: one indicatif bar on stderr for the whole command, shown
//! only when stderr is a terminal, `--quiet` is not given, and the command has run
//! for about a second. Each phase sets what the bar counts: bytes read (text and
//! npz inputs), tensors (IPC streams, conversion) or nothing (a spinner with the
//! elapsed time, for single steps such as a Parquet read or write).

use std::io::{IsTerminal, Read, Seek, SeekFrom};
use std::sync::Mutex;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a command runs before its progress appears (default one second;
/// `ARROW_SPARSE_PROGRESS_DELAY_MS` overrides it, for tests).
fn delay() -> Duration {
    std::env::var("ARROW_SPARSE_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(1), Duration::from_millis)
}

/// The progress bar of one command; dropping it clears the bar.
pub struct Progress {
    bar: ProgressBar,
    /// The channel whose closing stops the thread that shows the bar after the
    /// delay, and that thread; `None` when the bar is never shown or was cleared.
    shower: Mutex<Option<(Sender<()>, JoinHandle<()>)>>,
}

impl Progress {
    /// A progress display that may appear after the delay, or a hidden one when
    /// `quiet` or when stderr is not a terminal.
    pub fn new(quiet: bool) -> Progress {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress {
                bar: ProgressBar::hidden(),
                shower: Mutex::new(None),
            };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        let (stop, stopped) = mpsc::channel::<()>();
        let shown = bar.clone();
        let wait = delay();
        let shower = std::thread::spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                shown.set_draw_target(ProgressDrawTarget::stderr());
                shown.enable_steady_tick(Duration::from_millis(120));
            }
        });
        Progress {
            bar,
            shower: Mutex::new(Some((stop, shower))),
        }
    }

    /// A phase that reads `total` bytes (advanced by [`reader`](Self::reader)).
    pub fn bytes(&self, message: String, total: u64) {
        self.phase(
            message,
            Some(total),
            "{spinner} {msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, eta {eta})",
        );
    }

    /// A phase of `total` steps (advanced by [`inc`](Self::inc)), e.g. tensors.
    pub fn steps(&self, message: String, total: u64, unit: &str) {
        let template =
            format!("{{spinner}} {{msg}} [{{bar:30}}] {{pos}}/{{len}} {unit} ({{elapsed}})");
        self.phase(message, Some(total), &template);
    }

    /// A phase of one step whose progress cannot be measured: a spinner with the
    /// elapsed time.
    pub fn spinner(&self, message: String) {
        self.phase(message, None, "{spinner} {msg} ({elapsed})");
    }

    fn phase(&self, message: String, total: Option<u64>, template: &str) {
        if self.bar.is_hidden() && self.shower.lock().map_or(true, |s| s.is_none()) {
            return;
        }
        if let Ok(style) = ProgressStyle::with_template(template) {
            self.bar.set_style(style.progress_chars("=> "));
        }
        match total {
            Some(n) => self.bar.set_length(n),
            None => self.bar.unset_length(),
        }
        self.bar.set_position(0);
        self.bar.set_message(message);
    }

    /// Advance the current phase by `n` steps.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// `inner`, reporting the bytes read (and seeks) as the bar's position.
    pub fn reader<R>(&self, inner: R) -> ProgressRead<R> {
        ProgressRead {
            inner,
            bar: self.bar.clone(),
            pos: 0,
        }
    }

    /// Run `f` (which prints to stdout) with the bar out of the way.
    pub fn suspend<T>(&self, f: impl FnOnce() -> T) -> T {
        self.bar.suspend(f)
    }

    /// Remove the bar for good (also done on drop).
    pub fn clear(&self) {
        let shower = self.shower.lock().ok().and_then(|mut s| s.take());
        if let Some((stop, thread)) = shower {
            drop(stop);
            let _ = thread.join();
        }
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// A reader that moves the progress bar to its position in the file.
pub struct ProgressRead<R> {
    inner: R,
    bar: ProgressBar,
    pos: u64,
}

impl<R: Read> Read for ProgressRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        self.bar.set_position(self.pos);
        Ok(n)
    }
}

impl<R: Seek> Seek for ProgressRead<R> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = self.inner.seek(to)?;
        self.bar.set_position(self.pos);
        Ok(self.pos)
    }
}
