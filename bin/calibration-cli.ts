export async function runCalibrationReport(_argv: string[]): Promise<number> { process.stderr.write("calibration-report: not built yet\\n"); return 2; }
