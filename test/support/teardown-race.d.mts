export function countsAsFailure(error: { name?: string; message?: string }): boolean;
