// The last step before a local server starts: the launch plan is computed again from the files as they are now
// and, for a repository server, its digest must equal the one the gate approved — so a file swapped after the
// gate's check is refused here rather than run. The plan returned is what the spawner executes, as is: the
// program by its absolute path (argv[0] as written), the arguments, the working folder, the declared variables.
import { pin, PinError } from '../../trust/plan/digest';
import { TrackingReader } from '../../trust/sources/fsread';
import type { ServerReport } from '../../trust/report';
import { PlanError } from '../../trust/plan/command-line';
import { planLaunch, type LaunchPlan } from '../../trust/plan/launch-plan';
import { ClosureError } from '../../trust/plan/closure-files';

export class LaunchRefused extends Error {}

/** The plan to execute for a local server, verified against its approval. Throws LaunchRefused. */
export function verifiedPlan(server: ServerReport, project: string, searchPath: string | undefined): LaunchPlan {
  const def = server.definition!;
  if (!server.gated) {
    // A user server: written by a person on this machine; its own PATH (if it sets one) finds its program.
    try {
      const userPath = typeof def.env.PATH === 'string' ? def.env.PATH : searchPath;
      return planLaunch(def, project, { searchPath: userPath, configFiles: new Set(), gated: false }, new TrackingReader()).plan;
    } catch (e) {
      if (e instanceof PlanError || e instanceof ClosureError) throw new LaunchRefused(e.message);
      throw e;
    }
  }
  if (!server.pinned) throw new LaunchRefused('it has no pinned definition');
  let now;
  try {
    // In the mode it was pinned in: a guarded closure when it has one (a fallback from the guarded mode pins as the other).
    now = pin(
      { name: server.name, position: server.position, raw: server.raw, definition: def, inputs: server.pinned.pinned.inputs },
      project,
      new TrackingReader(),
      searchPath,
      server.pinned.pinned.guarded !== undefined || server.pinned.pinned.snapshot !== undefined,
    );
  } catch (e) {
    if (e instanceof PinError) throw new LaunchRefused(e.message);
    throw e;
  }
  const approved = server.viaEscapeHatch ? server.pinned.digest : server.record?.digest;
  if (now.digest !== server.pinned.digest || now.digest !== approved) {
    throw new LaunchRefused(
      'what it runs changed after the gate checked it (a file of its closure was replaced); it is not started — review it again before it can start',
    );
  }
  return now.plan!;
}
