/**
 * A module for `node --import` that prints the process's own peak resident size when it exits
 * (`MAXRSS_KB <kB>` on stderr), read from /proc/self/status (VmHWM). Not getrusage's maxRSS: Linux starts a
 * child's maxRSS from its parent's at fork and keeps it across exec, so a step spawned by a large process
 * (the node player after 10,000 detections) reported the parent's size. No `?` or `#` in it: they would end
 * the data: URL's path.
 */
export const PEAK_RSS_HOOK = `data:text/javascript,import{readFileSync}from"node:fs";process.on("exit",()=>{const m=/VmHWM:\\s+(\\d+)/.exec(readFileSync("/proc/self/status","utf8"));process.stderr.write("MAXRSS_KB "+(m||[0,"NaN"])[1]+"\\n")})`;
