// Progress of a long run on stderr: on a terminal, a bar redrawn in place
// with the rate and the time left; elsewhere (a log, a pipe), a plain line
// every `every` records or `seconds` seconds, whichever comes first.
//
//   [##########..........]  52.1%  5210/10000 texts  183.2 texts/s  ETA 0:26
//   embed: 5210/10000 texts (52.1%), 183.2 texts/s, ETA 26 s

/** 75 s -> '1:15', 4000 s -> '1:06:40'. */
export function clock(s) {
  if (!Number.isFinite(s)) return '?';
  s = Math.round(s);
  const h = Math.floor(s / 3600),
    m = Math.floor((s % 3600) / 60),
    sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/**
 * A progress display: tick(n) after n more records, end() when done.
 * total: null when unknown (stdin); start: records done before this run (--resume);
 * unit, units: the noun counted, singular and plural.
 */
export function progress({
  total,
  start = 0,
  unit = 'text',
  units = `${unit}s`,
  label = 'embed',
  every = 1000,
  seconds = 10,
  stream = process.stderr,
  quiet = false,
  now = () => performance.now(),
}) {
  const t0 = now();
  let done = start,
    lastLine = t0,
    lastCount = start,
    lastDraw = 0,
    drawn = -1; // the count of the frame on screen
  const rate = () => (done - start) / Math.max((now() - t0) / 1000, 1e-9);
  const eta = () => (total === null || done === start ? NaN : (total - done) / rate());
  const percent = () => (Math.floor((1000 * done) / Math.max(total, 1)) / 10).toFixed(1); // rounded down: 100.0% only when done
  const pct = () => (total ? ` ${percent().padStart(5)}%` : '');
  const count = () => `${done}${total === null ? '' : `/${total}`} ${(total ?? done) === 1 ? unit : units}`; // 1/1 text, 0/2 texts
  const tty = Boolean(stream.isTTY);

  function draw(force) {
    const t = now();
    if (!force && t - lastDraw < 100) return;
    lastDraw = t;
    const width = 20,
      filled = total ? Math.floor((width * done) / Math.max(total, 1)) : 0; // full only when done
    const bar = total ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]` : '';
    const line = `${bar}${pct()}  ${count()}  ${rate().toFixed(1)} ${units}/s${total === null ? '' : `  ETA ${clock(eta())}`}`;
    stream.write(`\r\x1b[2K${line}`);
    drawn = done;
  }

  function line(final) {
    const parts = [`${label}: ${count()}${total ? ` (${percent()}%)` : ''}`, `${rate().toFixed(1)} ${units}/s`];
    if (!final && total !== null) parts.push(`ETA ${Number.isFinite(eta()) ? `${Math.round(eta())} s` : '?'}`);
    stream.write(`${parts.join(', ')}${final ? `, ${((now() - t0) / 1000).toFixed(1)} s` : ''}\n`);
    lastLine = now();
    lastCount = done;
  }

  return {
    tick(n) {
      done += n;
      if (quiet) return;
      if (tty) draw(false);
      else if (done !== total && (done - lastCount >= every || now() - lastLine >= seconds * 1000)) line(false); // the last: end()
    },
    end() {
      if (quiet) return;
      if (tty) {
        if (drawn !== done) draw(true); // the last frame, unless it is on screen already
        stream.write('\n');
      } else line(true);
    },
    get done() {
      return done;
    },
    get rate() {
      return rate();
    },
  };
}
