// Another Node.js process seen through its inspector (started with --inspect=127.0.0.1:PORT): a full garbage collection on demand, and a CPU profile of a chosen window.
import WebSocket from 'ws';

/** A V8 CPU profile as the inspector's `Profiler.stop` returns it (the `.cpuprofile` format). */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One inspector session: commands in, their answers out (events are ignored). */
class InspectorSession {
  readonly #socket: WebSocket;
  #nextId = 1;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
  }

  static async open(port: number): Promise<InspectorSession> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl?: string }[];
    const url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
    if (!url) throw new Error(`no inspector target on port ${port}`);
    // Profiles of a busy process are large messages.
    const socket = new WebSocket(url, { maxPayload: 1024 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new InspectorSession(socket);
  }

  send<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const onMessage = (data: WebSocket.RawData) => {
        const message = JSON.parse(String(data)) as { id?: number; result?: T; error?: { message: string } };
        if (message.id !== id) return;
        this.#socket.off('message', onMessage);
        if (message.error) reject(new Error(`${method}: ${message.error.message}`));
        else resolve(message.result as T);
      };
      this.#socket.on('message', onMessage);
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.#socket.close();
  }
}

/**
 * Asks the process listening for inspectors on `port` to collect garbage (`HeapProfiler.collectGarbage`:
 * a full, compacting collection), `times` times in a row (a second pass frees what finalisers of the
 * first released). The session is closed after, so none stays attached while the process is measured.
 * Without this the bench could only take the lowest of several samples, and an idle V8 has no reason
 * to collect (bench/README.md, queue-memory).
 */
export async function collectGarbage(port: number, times = 2): Promise<void> {
  const session = await InspectorSession.open(port);
  try {
    for (let i = 0; i < times; i++) await session.send('HeapProfiler.collectGarbage');
  } finally {
    session.close();
  }
}

/**
 * Profiles the process on `port` while `work` runs (V8's sampling profiler, one sample every
 * `intervalUs`), and returns the profile with work's result. The session stays attached for that
 * time only: the sampling costs the profiled process a few percent.
 */
export async function profileWhile<T>(port: number, work: () => Promise<T>, intervalUs = 500): Promise<{ result: T; profile: CpuProfile }> {
  const session = await InspectorSession.open(port);
  try {
    await session.send('Profiler.enable');
    await session.send('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.send('Profiler.start');
    const outcome = await work().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const { profile } = await session.send<{ profile: CpuProfile }>('Profiler.stop');
    await session.send('Profiler.disable');
    if (!outcome.ok) throw outcome.error;
    return { result: outcome.value, profile };
  } finally {
    session.close();
  }
}
