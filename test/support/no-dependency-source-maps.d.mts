import type { Plugin } from "vite";

/** Loads the modules under node_modules without their source maps, for the workerd runners. */
export function noDependencySourceMaps(): Plugin;
