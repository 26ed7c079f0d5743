// Kept for importers written before times moved to src/text/time.ts (the one place a time is worded).
export { exactTime, relativeTime, whenText } from '../text/time';
