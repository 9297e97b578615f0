// The platforms a release ships: our name for each (archive and npm package suffix), Bun's compile target,
// and npm's os/cpu values (what the esbuild-style optional packages are selected by).
export type Platform = {
  name: string;
  target: string;
  os: string;
  cpu: string;
  exe: string;
  archive: "tar.gz" | "zip";
};

export const PLATFORMS: Platform[] = [
  { name: "linux-x64", target: "bun-linux-x64", os: "linux", cpu: "x64", exe: "subagents", archive: "tar.gz" },
  { name: "linux-arm64", target: "bun-linux-arm64", os: "linux", cpu: "arm64", exe: "subagents", archive: "tar.gz" },
  { name: "darwin-x64", target: "bun-darwin-x64", os: "darwin", cpu: "x64", exe: "subagents", archive: "tar.gz" },
  { name: "darwin-arm64", target: "bun-darwin-arm64", os: "darwin", cpu: "arm64", exe: "subagents", archive: "tar.gz" },
  { name: "windows-x64", target: "bun-windows-x64", os: "win32", cpu: "x64", exe: "subagents.exe", archive: "zip" },
];

/** The platform this process runs on, if we ship one for it. */
export function hostPlatform(): Platform | undefined {
  return PLATFORMS.find((p) => p.os === process.platform && p.cpu === process.arch);
}

export const archiveName = (version: string, p: Platform) => `subagents-${version}-${p.name}.${p.archive}`;
