import fs from 'node:fs/promises';
import { builtinModules } from 'node:module';
import path from 'node:path';

/**
 * What docker/Dockerfile puts into an image, read from the Dockerfile itself, so a test can lay the
 * same files out on disk and start the same command without a Docker engine (none runs here).
 * Understands the instructions that file uses: FROM ... AS, WORKDIR, ENV, COPY [--from], CMD in
 * exec form; any other instruction in a runtime stage is an error, so the reading cannot drift.
 */
export interface ImageCopy {
  /** The stage copied from. */
  from: string;
  source: string;
  /** Absolute path inside the image. */
  destination: string;
}

export interface ImageStage {
  name: string;
  /** The image or stage it starts from. */
  base: string;
  workdir: string;
  env: Record<string, string>;
  copies: ImageCopy[];
  /** The base image's entry point is node, so this is node's argument list. */
  cmd: string[];
  /** RUN commands of this stage alone. */
  runs: string[];
}

export class DockerfileReadError extends Error {
  readonly code = 'DOCKERFILE_UNREADABLE';
  constructor(message: string) {
    super(message);
    this.name = 'DockerfileReadError';
  }
}

/** Logical lines: continuations joined, comments and blank lines dropped. */
function instructions(text: string): string[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith('#'));
}

function parseStages(text: string): Map<string, ImageStage> {
  const stages = new Map<string, ImageStage>();
  let stage: ImageStage | undefined;
  for (const line of instructions(text)) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (keyword === 'ARG' && !stage) continue;
    if (keyword === 'FROM') {
      const match = /^(\S+)\s+AS\s+(\S+)$/i.exec(args);
      if (!match) throw new DockerfileReadError(`FROM without a stage name: ${line}`);
      const [, base = '', name = ''] = match;
      const parent = stages.get(base);
      stage = {
        name,
        base,
        workdir: parent?.workdir ?? '/',
        env: { ...parent?.env },
        copies: [...(parent?.copies ?? [])],
        cmd: [...(parent?.cmd ?? [])],
        runs: [],
      };
      stages.set(name, stage);
      continue;
    }
    if (!stage) throw new DockerfileReadError(`${keyword} before the first FROM`);
    switch (keyword) {
      case 'WORKDIR':
        stage.workdir = path.posix.resolve(stage.workdir, args);
        break;
      case 'ENV': {
        const [key = '', ...value] = args.split('=');
        stage.env[key] = value.join('=');
        break;
      }
      case 'COPY': {
        const parts = rest.filter((part) => !part.startsWith('--chown'));
        const from = parts[0]?.startsWith('--from=')
          ? (parts.shift() ?? '').slice('--from='.length)
          : 'context';
        const destination = path.posix.resolve(stage.workdir, parts.pop() ?? '');
        if (parts.length === 0) throw new DockerfileReadError(`COPY without a source: ${line}`);
        // Several sources go into the destination folder, each under its own name.
        for (const source of parts)
          stage.copies.push({
            from,
            source,
            destination:
              parts.length > 1 ? path.posix.join(destination, path.posix.basename(source)) : destination,
          });
        break;
      }
      case 'CMD':
        stage.cmd = JSON.parse(args) as string[];
        break;
      case 'RUN':
        stage.runs.push(args);
        break;
      case 'USER':
      case 'EXPOSE':
      case 'ARG':
        break;
      default:
        throw new DockerfileReadError(`instruction this reader does not know: ${line}`);
    }
  }
  return stages;
}

/** Every stage of the Dockerfile by name; a stage built on another starts with its files and settings. */
export async function readDockerfile(dockerfile: string): Promise<Map<string, ImageStage>> {
  return parseStages(await fs.readFile(dockerfile, 'utf8'));
}

/**
 * Lays an image target out under `root` (its WORKDIR becomes `root`): each COPY from `stage` is
 * taken from `sourceOf(stage, path)`. node_modules is linked, not copied.
 */
export async function layOutImage(options: {
  target: ImageStage;
  root: string;
  sourceOf: (copy: ImageCopy) => string;
}): Promise<void> {
  const { target, root } = options;
  for (const copy of target.copies) {
    const relative = path.posix.relative(target.workdir, copy.destination);
    if (relative.startsWith('..')) throw new DockerfileReadError(`COPY outside WORKDIR: ${copy.destination}`);
    const destination = path.join(root, relative);
    const source = options.sourceOf(copy);
    await fs.mkdir(path.dirname(destination), { recursive: true });
    if (path.basename(source) === 'node_modules') await fs.symlink(source, destination, 'dir');
    else await fs.cp(source, destination, { recursive: true });
  }
}

const IMPORT_PATTERN =
  /(?:^|\s|;)(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
const BUILTINS = new Set(builtinModules);

/** The npm package a bare specifier names (`@scope/pkg/sub` -> `@scope/pkg`). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/**
 * Follows the relative imports of compiled ES modules from `entry` and returns the packages they
 * import; throws when a relative import leads to a file that is not there (not in the image).
 */
export async function packagesImportedFrom(entry: string): Promise<string[]> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() ?? '';
    if (seen.has(file)) continue;
    seen.add(file);
    const text = await fs.readFile(file, 'utf8').catch(() => {
      throw new DockerfileReadError(`${file} is imported but not in the image`);
    });
    for (const match of text.matchAll(IMPORT_PATTERN)) {
      const specifier = match[1] ?? match[2] ?? '';
      if (specifier.startsWith('.')) pending.push(path.resolve(path.dirname(file), specifier));
      else if (!specifier.startsWith('node:') && !BUILTINS.has(specifier)) packages.add(packageOf(specifier));
    }
  }
  return [...packages].sort();
}
