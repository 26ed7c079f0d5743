// The door of a contained server's sandbox (./egress.ts tells why it is the one way out, and how it was chosen):
// util-linux's nsenter enters the user and network namespaces of the sandbox's first process, still blocked by
// bubblewrap, and runs a few lines of Node there that listen on the sandbox's own 127.0.0.1:3128 and pass the
// listening socket back over the IPC channel; the filtering proxy (./egress.ts Egress) serves what it accepts. A door
// helper (./transparent-carrier.ts) may do more in those namespaces after the door; what it does more fails soft. It
// opens the door; it decides nothing about what goes through it.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { DOOR_PORT, type Egress } from './egress';

const DOOR_TIMEOUT_MS = 10_000;

/** util-linux's nsenter from the system paths (never PATH: a workspace's bin folder could name one). */
export function findNsenter(): string | undefined {
  for (const p of ['/usr/bin/nsenter', '/bin/nsenter', '/usr/sbin/nsenter', '/sbin/nsenter']) {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.realpathSync(p);
    } catch {
      // next
    }
  }
  return undefined;
}

/** What to do when a door cannot open (the server then does not start). */
const DOOR_FIX =
  'the server is not started without it: allow nsenter (util-linux) to enter the user and network namespaces of a bubblewrap sandbox here (a container may need seccomp/AppArmor to allow setns), or remove the network rules for this server to run it without network';

// Runs inside the sandbox's network namespace: listen on its loopback, hand the listening socket over, exit.
const DOOR_SCRIPT = `const s=require('net').createServer();s.on('error',e=>{console.error(e.message);process.exit(3)});s.listen(${DOOR_PORT},'127.0.0.1',()=>process.send('door',s,()=>process.exit(0)))`;

/**
 * A door helper that does more in the sandbox's namespaces than open the door (./transparent-carrier.ts): its script
 * (which sends `'door'` with the listener first, as DOOR_SCRIPT does) and arguments, and what to do with each message
 * after the door — `true` when the helper is done. If the helper ends without saying it is done, `ended` is called
 * with what it said and the door stays open (what it does more fails soft).
 */
export interface DoorHelper {
  script: string;
  args: string[];
  message(m: unknown, handle: unknown): boolean;
  ended(why: string): void;
}

/**
 * Opens the door of the sandbox whose first process is `pid` (bubblewrap's `child-pid`, still blocked): a listener
 * on its 127.0.0.1:3128, served by `egress`. Rejects (with what nsenter or the listener said) within 10 s.
 */
export function openDoor(pid: number, egress: Egress, timeoutMs = DOOR_TIMEOUT_MS, more?: DoorHelper): Promise<void> {
  const nsenter = findNsenter();
  if (!nsenter)
    return Promise.reject(
      new Error(
        'nsenter (util-linux) is not in /usr/bin or /bin, so the network door of a contained server cannot be opened (install util-linux)',
      ),
    );
  return new Promise((resolve, reject) => {
    let served = false;
    const helper = spawn(
      nsenter,
      [
        '--target',
        String(pid),
        '--user',
        '--preserve-credentials',
        '--net',
        '--',
        process.execPath,
        '-e',
        more?.script ?? DOOR_SCRIPT,
        ...(more?.args ?? []),
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        env: { ELECTRON_RUN_AS_NODE: '1' },
        serialization: 'json',
      },
    );
    let stderr = '';
    let done = false;
    const finish = (e?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (e) {
        try {
          helper.kill('SIGKILL');
        } catch {
          // gone
        }
        reject(e);
      } else resolve();
    };
    const timer = setTimeout(() => {
      if (served && more) {
        // The door is open; what the helper does more did not finish: it fails soft.
        more.ended(`the door helper did not finish within ${timeoutMs / 1000} s${stderr ? ` (${stderr.trim().slice(0, 300)})` : ''}`);
        helper.kill('SIGKILL');
        return finish();
      }
      finish(
        new Error(
          `the network door did not open within ${timeoutMs / 1000} s${stderr ? ` (${stderr.trim().slice(0, 300)})` : ''}; ${DOOR_FIX}`,
        ),
      );
    }, timeoutMs);
    helper.stderr!.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8');
    });
    helper.once('error', (e) => finish(new Error(`the network door could not be opened: ${e.message}`)));
    helper.on('message', (m: unknown, handle: unknown) => {
      if (done) return;
      if (served && more) {
        if (more.message(m, handle)) finish();
        return;
      }
      if (m !== 'door' || !(handle instanceof net.Server))
        return finish(new Error('the network door helper sent something else than its listener'));
      egress.serve(handle);
      served = true;
      if (!more) finish();
    });
    helper.once('close', (code, sig) => {
      if (!done && served && more) {
        more.ended(`the door helper ended (${sig ?? `exit ${code}`})${stderr ? `: ${stderr.trim().slice(0, 300)}` : ''}`);
        return finish();
      }
      finish(
        new Error(
          `the network door could not be opened: nsenter ended (${sig ?? `exit ${code}`})${stderr ? `: ${stderr.trim().slice(0, 300)}` : ''}; ${DOOR_FIX}`,
        ),
      );
    });
  });
}
