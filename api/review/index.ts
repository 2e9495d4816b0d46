export { registerReviewRoutes } from "./get.js";
